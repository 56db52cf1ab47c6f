package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustCLI runs kfa in process and fails the test unless it exits 0.
func mustCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := cli(t, stdin, args...)
	if code != 0 {
		t.Fatalf("kfa %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// TestRecordsExportRoundTrip: an export imports into another database
// unchanged, and exporting that gives the same bytes; importing it back
// into the first changes nothing.
func TestRecordsExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustCLI(t, "", "init", "--data", a)
	mustCLI(t, "", "init", "--data", b)
	mustCLI(t, "", "records", "import", "../../samples/records.jsonl", "--data", a)
	// Text that JSON encoders like to escape, and fields some records lack.
	mustCLI(t, `{"id":"zz-odd","kind":"Howto","product":"html","title":"<b> & \"quotes\" — ünïcode","body":"line 1\n\tline 2 <script>","tags":["a&b"],"updatedAt":"2026-01-02T03:04:05.6Z"}`+"\n",
		"records", "import", "-", "--data", a)

	first := filepath.Join(dir, "first.jsonl")
	var res exportResult
	out := mustCLI(t, "", "records", "export", first, "--json", "--data", a)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Records != 79 || res.File != first {
		t.Fatalf("export summary %q: %+v, %v", out, res, err)
	}
	out = mustCLI(t, "", "records", "import", first, "--data", b)
	if !strings.Contains(out, "79 lines, 79 added, 0 updated, 0 unchanged, 0 rejected") {
		t.Fatalf("import of the export: %q", out)
	}
	second := filepath.Join(dir, "second.jsonl")
	mustCLI(t, "", "records", "export", second, "--data", b)
	x, _ := os.ReadFile(first)
	y, _ := os.ReadFile(second)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("re-export differs:\n%s\n---\n%s", x, y)
	}
	if !bytes.Contains(x, []byte(`"title":"<b> & \"quotes\" — ünïcode"`)) || !bytes.Contains(x, []byte(`"updatedAt":"2026-01-02T03:04:05.600Z"`)) {
		t.Fatalf("the odd record is not written as text: %s", x[bytes.LastIndex(x, []byte(`{"id":"zz-odd"`)):])
	}
	out = mustCLI(t, "", "records", "import", first, "--data", a)
	if !strings.Contains(out, "79 lines, 0 added, 0 updated, 79 unchanged, 0 rejected") {
		t.Fatalf("import of the export into its source: %q", out)
	}

	// To stdout, filtered (any case): the lines there, the summary on stderr.
	stdout, stderr, code := cli(t, "", "records", "export", "--kind", "HOWTO", "--data", a)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) < 10 || !strings.HasPrefix(stderr, "Exported "+itoa(len(lines))+" records") {
		t.Fatalf("filtered export: code %d, %d lines, stderr %q", code, len(lines), stderr)
	}
	for _, l := range lines {
		var r struct{ Kind string }
		if err := json.Unmarshal([]byte(l), &r); err != nil || !strings.EqualFold(r.Kind, "howto") {
			t.Fatalf("filtered export line %q", l)
		}
	}
	// A directory that does not exist is refused before anything runs.
	_, stderr, code = cli(t, "", "records", "export", filepath.Join(dir, "nope", "x.jsonl"), "--data", a)
	if code != 1 || !strings.Contains(stderr, "does not exist") {
		t.Fatalf("export into a missing directory: code %d, %q", code, stderr)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRecordsDeleteMany(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	mustCLI(t, "", "init", "--data", data)
	var in strings.Builder
	for _, l := range []string{
		`{"id":"a1","kind":"fix","product":"p1","title":"A1","body":"x"}`, `{"id":"a2","kind":"fix","product":"p1","title":"A2","body":"x"}`,
		`{"id":"b1","kind":"howto","product":"p2","title":"B1","body":"x"}`, `{"id":"b2","kind":"howto","product":"P2","title":"B2","body":"x"}`,
		`{"id":"c1","kind":"reference","title":"C1","body":"x"}`, `{"id":"c2","kind":"reference","title":"C2","body":"x"}`,
	} {
		in.WriteString(l + "\n")
	}
	mustCLI(t, in.String(), "records", "import", "-", "--data", data)
	count := func() int {
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(mustCLI(t, "", "records", "list", "--limit", "0", "--json", "--data", data)), &list); err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	out := mustCLI(t, "", "records", "delete", "a1", "a2", "a1", "--data", data)
	if out != "Deleted 2 of 2 records.\n" || count() != 4 {
		t.Fatalf("delete a1 a2: %q, %d left", out, count())
	}
	ids := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(ids, []byte("# stale\nc1\n\n  nope-1  \nc2\nnot/an/id\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := cli(t, "", "records", "delete", "--from", ids, "--data", data)
	if code != 1 || out != "Deleted 2 of 4 records.\n" || !strings.Contains(stderr, `2 of 4 ids name no record: "nope-1", "not/an/id"`) || count() != 2 {
		t.Fatalf("delete --from: code %d, out %q, err %q, %d left", code, out, stderr, count())
	}
	var res deleteResult
	out = mustCLI(t, "", "records", "delete", "--product", "p2", "--json", "--data", data)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Requested != 2 || res.Deleted != 2 || len(res.NotFound) != 0 || count() != 0 {
		t.Fatalf("delete --product p2: %q", out)
	}
	out = mustCLI(t, "", "records", "delete", "--kind", "fix", "--data", data)
	if out != "No record matches the filter; nothing deleted.\n" {
		t.Fatalf("a filter matching nothing: %q", out)
	}
	_, stderr, code = cli(t, "", "records", "delete", "gone", "--data", data)
	if code != 1 || strings.TrimSpace(stderr) != `kfa records delete: no record with id "gone"` {
		t.Fatalf("one missing id: code %d, %q", code, stderr)
	}
	for _, args := range [][]string{
		{"records", "delete", "--data", data},
		{"records", "delete", "a1", "--kind", "fix", "--data", data},
		{"records", "delete", "--from", ids, "--product", "p", "--data", data},
	} {
		if _, _, code := cli(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestRecordsReindexChecksSynonyms: without a server, reindex checks the
// synonyms file before deleting the index, and names a bad line.
func TestRecordsReindexChecksSynonyms(t *testing.T) {
	data := t.TempDir()
	mustCLI(t, "", "init", "--data", data)
	file := filepath.Join(data, "synonyms.txt")
	if err := os.WriteFile(file, []byte("postgres, postgresql, pg\nhot backup, snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, "", "records", "reindex", "--data", data)
	if code != 1 || !strings.Contains(stderr, file+`:2: "hot backup" is several words`) {
		t.Fatalf("a bad synonyms file: code %d, %q", code, stderr)
	}
	if err := os.WriteFile(file, []byte("postgres, postgresql, pg\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, "", "records", "reindex", "--data", data)
	if !strings.Contains(out, "with 1 synonym group)") {
		t.Fatalf("reindex: %q", out)
	}
}
