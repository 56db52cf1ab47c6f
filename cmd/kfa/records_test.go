package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
)

// cli runs kfa in process with the given stdin; it returns stdout, stderr
// and the exit code.
func cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runEnv(context.Background(), e, args)
	return out.String(), errb.String(), code
}

func recordLine(id, title string) string {
	return fmt.Sprintf(`{"id":%q,"kind":"fix","title":%q,"body":"body of %s"}`, id, title, id)
}

func writeLines(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecordsImportCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	good := writeLines(t, dir, recordLine("a", "Alpha"), recordLine("b", "Beta"))

	// Only serve and init create a database.
	_, errOut, code := cli(t, "", "records", "import", good, "--data", data)
	if code != 1 || !strings.Contains(errOut, "no kfa database at "+filepath.Join(data, "kfa.db")) {
		t.Fatalf("import without a database: code %d, err %q", code, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("import without a database created %s: %v", data, err)
	}
	ok(t, "init", "--data", data)

	out, errOut, code := cli(t, "", "records", "import", good, "--data", data)
	if code != 0 || !strings.Contains(out, "2 lines, 2 added, 0 updated, 0 unchanged, 0 rejected") {
		t.Fatalf("first import: code %d, out %q, err %q", code, out, errOut)
	}
	out, _, code = cli(t, "", "records", "import", "--json", good, "--data", data)
	var res importResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Unchanged != 2 || res.Added+res.Updated != 0 {
		t.Fatalf("re-import: code %d, out %q", code, out)
	}

	bad := writeLines(t, dir, recordLine("c", "Gamma"), `{"id":"d","kind":"fix","title":"T","body":"B","updated\u001b[2J":"x"}`, recordLine("e", ""))
	out, errOut, code = cli(t, "", "records", "import", "--strict", bad, "--data", data)
	if code != 1 || !strings.Contains(errOut, "nothing written: 2 of 3 lines rejected") ||
		!strings.Contains(out, "line 2: updated") || !strings.Contains(out, "line 3: title: must not be empty") {
		t.Fatalf("strict import: code %d, out %q, err %q", code, out, errOut)
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Fatalf("a control character from the file reached the terminal: %q", out)
	}
	out, errOut, code = cli(t, "", "records", "import", bad, "--data", data)
	if code != 1 || !strings.Contains(out, "1 added") || !strings.Contains(errOut, "2 of 3 lines rejected and skipped") {
		t.Fatalf("lenient import: code %d, out %q, err %q", code, out, errOut)
	}
	out, _, code = cli(t, recordLine("f", "From stdin")+"\n", "records", "import", "-", "--data", data)
	if code != 0 || !strings.Contains(out, "1 added") {
		t.Fatalf("stdin import: code %d, out %q", code, out)
	}

	out, _, code = cli(t, "", "records", "list", "--json", "--limit", "0", "--data", data)
	var list []api.Record
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 4 {
		t.Fatalf("list: code %d, out %q", code, out)
	}
	out, _, code = cli(t, "", "records", "list", "--limit", "2", "--data", data)
	if code != 0 || !strings.Contains(out, "2 of 4 records; more with --after b") {
		t.Fatalf("paged list: code %d, out %q", code, out)
	}
	out, _, code = cli(t, "", "records", "show", "a", "--data", data)
	if code != 0 || !strings.HasPrefix(out, "Alpha\n") || !strings.Contains(out, "body of a") {
		t.Fatalf("show: code %d, out %q", code, out)
	}
	if _, _, code = cli(t, "", "records", "delete", "a", "--data", data); code != 0 {
		t.Fatalf("delete: code %d", code)
	}
	_, errOut, code = cli(t, "", "records", "delete", "a", "--data", data)
	if code != 1 || strings.TrimSpace(errOut) != `kfa records delete: no record with id "a"` {
		t.Fatalf("second delete: code %d, err %q", code, errOut)
	}
}

func TestRecordsReindexWithoutServer(t *testing.T) {
	data := t.TempDir()
	ok(t, "init", "--data", data)
	if _, _, code := cli(t, recordLine("a", "A")+"\n", "records", "import", "-", "--data", data); code != 0 {
		t.Fatal("import failed")
	}
	idx := filepath.Join(data, "index", "records")
	if err := os.MkdirAll(idx, 0o700); err != nil {
		t.Fatal(err)
	}
	out, _, code := cli(t, "", "records", "reindex", "--data", data)
	if code != 0 || !strings.Contains(out, "kfa serve rebuilds it") {
		t.Fatalf("reindex: code %d, out %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "index")); !os.IsNotExist(err) {
		t.Fatalf("index directory still there: %v", err)
	}
}

func TestRecordsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"records"}, {"records", "frobnicate"}, {"records", "import"}, {"records", "import", "a", "b"},
		{"records", "delete"}, {"records", "list", "--limit", "-1"},
	} {
		if _, _, code := cli(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	_, errOut, code := cli(t, "", "records", "import", filepath.Join(t.TempDir(), "missing.jsonl"), "--data", t.TempDir())
	if code != exitError || !strings.Contains(errOut, "open import file") {
		t.Fatalf("missing file: code %d, err %q", code, errOut)
	}
}

// TestOneIsSingular: what the commands count reads as English when the
// count is one ("1 line", not "1 lines").
func TestOneIsSingular(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ok(t, "init", "--data", data)
	one := writeLines(t, dir, recordLine("a", "Alpha"))
	for _, tc := range []struct {
		args  []string
		code  int
		want  string
		wrong string
	}{
		{[]string{"records", "import", one}, 0, ": 1 line, 1 added", "1 lines"},
		{[]string{"records", "export", filepath.Join(dir, "out.jsonl")}, 0, "Exported 1 record (", "1 records"},
		{[]string{"records", "delete", "a", "nope"}, 1, "1 of 2 ids name no record", ""},
		{[]string{"check"}, 0, "examined", " 1 entries"},
		{[]string{"stats"}, 0, "Records", "1 changes"},
	} {
		out, errOut, code := cli(t, "", append(tc.args, "--data", data)...)
		all := out + errOut
		if code != tc.code || !strings.Contains(all, tc.want) || tc.wrong != "" && strings.Contains(all, tc.wrong) {
			t.Errorf("kfa %s: code %d, want %d, output with %q and without %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, tc.wrong, all)
		}
	}
	ok(t, "agent", "create", "--name", "solo", "--data", data)
	if out := ok(t, "agent", "list", "--data", data); !strings.Contains(out, "1 of 1 agent shown.") {
		t.Errorf("agent list of one agent:\n%s", out)
	}
	bad := writeLines(t, dir, `{"id":"b"}`)
	if _, errOut, code := cli(t, "", "records", "import", "--strict", bad, "--data", data); code != 1 ||
		!strings.Contains(errOut, "nothing written: 1 of 1 line rejected") {
		t.Errorf("strict import of one bad line: code %d, err %q", code, errOut)
	}
}
