package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestDockerfileBuild: no Docker engine runs here, so this test runs the
// Dockerfile's own go build line (CGO_ENABLED=0, its -ldflags) outside
// Docker and checks what the image would ship: a static binary that runs
// `kfa version` and reports the stamped version. It also holds the
// Dockerfile to what the docs promise of the image.
func TestDockerfileBuild(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	if testing.Short() {
		t.Skip("builds the kfa binary")
	}
	df, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(df)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM \S+ AS build$`),                             // multi-stage:
		regexp.MustCompile(`(?m)^COPY --from=build /out/kfa /usr/local/bin/kfa$`), // only the binary crosses
		regexp.MustCompile(`(?m)^USER kfa$`),                                      // not root
		regexp.MustCompile(`(?m)^VOLUME /data$`),
		regexp.MustCompile(`(?m)^ENV KFA_DATA=/data`),
		regexp.MustCompile(`(?m)^HEALTHCHECK .*\n.*/healthz`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*) -o /out/kfa (\./cmd/kfa)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("the Dockerfile has no line RUN CGO_ENABLED=0 go build ... -o /out/kfa ./cmd/kfa")
	}
	bin := filepath.Join(t.TempDir(), "kfa")
	line := strings.NewReplacer("${VERSION}", "v9.8.7-test", "${COMMIT}", "0123abc", "${BUILD_DATE}", "2026-12-02T00:00:00Z").
		Replace(m[1]) + " -o " + bin + " " + m[2]
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the binary is dynamically linked (it has an ELF interpreter)")
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Fatalf("the binary needs shared libraries: %v", libs)
		}
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "kfa v9.8.7-test\ncommit  0123abc\ngo      go1.") ||
		!strings.Contains(string(out), "\nbuilt   2026-12-02T00:00:00Z\n") {
		t.Fatalf("kfa version: %v\n%s", err, out)
	}
	if out2, err := exec.Command(bin, "--version").CombinedOutput(); err != nil || string(out2) != string(out) {
		t.Fatalf("kfa --version: %v\n%s", err, out2)
	}
}
