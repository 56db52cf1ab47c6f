package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kfaAs runs the CLI in-process as if started under the name prog, with
// the given environment variables.
func kfaAs(t *testing.T, prog string, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }, prog: prog}
	code := runEnv(context.Background(), e, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestFirstHourMessages: the mistakes a new user makes in the first hour
// each get one clear message that says what to do, in the words the
// user typed.
func TestFirstHourMessages(t *testing.T) {
	tmp := shortTempDir(t)
	missing := filepath.Join(tmp, "wrong-dir")
	for _, tc := range []struct {
		name   string
		prog   string
		vars   map[string]string
		args   []string
		code   int
		stderr string // exactly, when set
		has    []string
	}{
		{name: "unknown command: the closest one, one line", args: []string{"agents"}, code: 2,
			stderr: "kfa: unknown command \"agents\" (did you mean \"agent\"?); run 'kfa help' for the list\n"},
		{name: "unknown command far from any", args: []string{"frobnicate"}, code: 2,
			stderr: "kfa: unknown command \"frobnicate\"; run 'kfa help' for the list\n"},
		{name: "a prefix of a command", args: []string{"disc"}, code: 2,
			has: []string{`(did you mean "discussions"?)`}},
		{name: "hints use the name kfa was started with", prog: "./bin/kfa", args: []string{"agnet"}, code: 2,
			stderr: "kfa: unknown command \"agnet\" (did you mean \"agent\"?); run './bin/kfa help' for the list\n"},
		{name: "mistyped flag: once, with the closest", args: []string{"agent", "create", "--nmae", "alice"}, code: 2,
			stderr: "kfa agent create: unknown flag --nmae (did you mean --name?)\nRun 'kfa agent create -h' for usage.\n"},
		{name: "usage hint with the program name", prog: "./bin/kfa", args: []string{"tasks", "list", "--limt", "3"}, code: 2,
			stderr: "kfa tasks list: unknown flag --limt (did you mean --limit?)\nRun './bin/kfa tasks list -h' for usage.\n"},
		{name: "--port: kfa takes host and port together", args: []string{"serve", "--port", "9000"}, code: 2,
			stderr: "kfa serve: unknown flag --port (did you mean --addr? it takes host:port, such as --addr 127.0.0.1:9000)\nRun 'kfa serve -h' for usage.\n"},
		{name: "--listen and --bind are --addr too", args: []string{"serve", "--listen=0.0.0.0:80"}, code: 2,
			has: []string{"unknown flag --listen (did you mean --addr? it takes host:port, such as --addr 127.0.0.1:8080)"}},
		{name: "--host", args: []string{"serve", "--host", "0.0.0.0"}, code: 2,
			has: []string{"unknown flag --host (did you mean --addr? it takes host:port, such as --addr 127.0.0.1:8080)"}},
		{name: "--database names --store", args: []string{"stats", "--database", "postgres://x/y"}, code: 2,
			stderr: "kfa stats: unknown flag --database (did you mean --store?)\nRun 'kfa stats -h' for usage.\n"},
		{name: "--data-dir", args: []string{"agent", "list", "--data-dir", "x"}, code: 2,
			has: []string{"unknown flag --data-dir (did you mean --data?)"}},
		{name: "--format json", args: []string{"tasks", "list", "--format", "json"}, code: 2,
			has: []string{"unknown flag --format (did you mean --json?)"}},
		{name: "a synonym the command lacks suggests nothing", args: []string{"version", "--port", "1"}, code: 2,
			stderr: "kfa version: unknown flag --port\nRun 'kfa version -h' for usage.\n"},
		{name: "a flag value of the wrong kind", args: []string{"serve", "--ask-rate", "abc"}, code: 2,
			stderr: "kfa serve: --ask-rate \"abc\": want a whole number, such as 5\nRun 'kfa serve -h' for usage.\n"},
		{name: "a variable of the wrong kind", vars: map[string]string{"KFA_ASK_RATE": "abc"}, args: []string{"serve", "--data", missing}, code: 2,
			stderr: "kfa serve: KFA_ASK_RATE=\"abc\": want a whole number, such as 5 (it sets --ask-rate)\nRun 'kfa serve -h' for usage.\n"},
		{name: "a duration variable", vars: map[string]string{"KFA_SHUTDOWN_TIMEOUT": "15"}, args: []string{"serve", "--data", missing}, code: 2,
			has: []string{`KFA_SHUTDOWN_TIMEOUT="15": want a duration such as 30s, 5m or 2h45m (it sets --shutdown-timeout)`}},
		{name: "a boolean flag", args: []string{"stats", "--json=maybe"}, code: 2,
			has: []string{`kfa stats: --json "maybe": want true or false`}},
		{name: "a flag without its value", args: []string{"stats", "--data"}, code: 2,
			stderr: "kfa stats: --data needs a value: a directory\nRun 'kfa stats -h' for usage.\n"},
		{name: "a usage error inside a group names the subcommand", args: []string{"agent", "create"}, code: 2,
			stderr: "kfa agent create: --name is required\nRun 'kfa agent create -h' for usage.\n"},
		{name: "help shows the program name", prog: "./bin/kfa", args: []string{"help", "agent", "create"}, code: 0,
			has: []string{"Usage: ./bin/kfa agent create --name NAME", "\n  ./bin/kfa agent create --name build-bot", "\n  --name name\n"}},
		{name: "group help shows the program name", prog: "./bin/kfa", args: []string{"records", "-h"}, code: 0,
			has: []string{"Usage: ./bin/kfa records import|list|show|export|delete|reindex", "Run './bin/kfa records <subcommand> -h'"}},
		{name: "no database: the hint runs as printed", prog: "./bin/kfa", args: []string{"agent", "create", "--name", "alice", "--data", missing}, code: 1,
			stderr: "kfa agent create: no kfa database at " + filepath.Join(missing, "kfa.db") + ": check --data (or KFA_DATA); to start one there, " +
				"run './bin/kfa serve --data " + missing + "' (or './bin/kfa init --data " + missing + "')\n"},
		{name: "backup into a missing directory", args: []string{"backup", filepath.Join(missing, "sub", "b.db"), "--data", missing}, code: 1,
			stderr: "kfa backup: the directory " + filepath.Join(missing, "sub") + " does not exist; create it first (mkdir -p " + filepath.Join(missing, "sub") + ")\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kfaAs(t, tc.prog, tc.vars, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			if tc.stderr != "" && r.stderr != tc.stderr {
				t.Fatalf("stderr %q\nwant   %q", r.stderr, tc.stderr)
			}
			for _, h := range tc.has {
				if !strings.Contains(r.stdout+r.stderr, h) {
					t.Fatalf("output lacks %q: %s", h, r)
				}
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Fatalf("%v created %s", tc.args, missing)
			}
		})
	}
}

// TestVersion: kfa version, --version and -v print the version, the
// commit, the Go version and the build date; --json the same as JSON.
func TestVersion(t *testing.T) {
	want := ok(t, "version")
	lines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "kfa ") || !strings.HasPrefix(lines[1], "commit  ") ||
		!strings.HasPrefix(lines[2], "go      go1.") || !strings.HasPrefix(lines[3], "built   ") {
		t.Fatalf("kfa version:\n%s", want)
	}
	for _, alias := range []string{"--version", "-v", "-version"} {
		if got := ok(t, alias); got != want {
			t.Errorf("kfa %s:\n%s\nwant\n%s", alias, got, want)
		}
	}
	var v VersionInfo
	if err := json.Unmarshal([]byte(ok(t, "version", "--json")), &v); err != nil || v.Version == "" || v.Commit == "" ||
		!strings.HasPrefix(v.GoVersion, "go1.") || v.BuildDate == "" || v.Platform == "" {
		t.Fatalf("kfa version --json: %+v %v", v, err)
	}
}

// TestInit: init makes the database the other commands then use, and
// leaves an existing one alone.
func TestInit(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "data")
	if out := ok(t, "init", "--data", dir); out != "Created an empty kfa database at "+filepath.Join(dir, "kfa.db")+".\n"+
		"Start the server with: kfa serve --data "+dir+"\n" {
		t.Fatalf("init: %q", out)
	}
	a := decode[struct{ ID string }](t, "agent", "create", "--name", "alice", "--data", dir)
	if out := ok(t, "init", "--data", dir); out != "A kfa database is already at "+filepath.Join(dir, "kfa.db")+"; nothing changed.\n" {
		t.Fatalf("second init: %q", out)
	}
	if res := decode[InitResult](t, "init", "--data", dir); res.Created || res.Database != filepath.Join(dir, "kfa.db") {
		t.Fatalf("init --json on an existing database: %+v", res)
	}
	if out := ok(t, "agent", "list", "--data", dir); !strings.Contains(out, a.ID) {
		t.Fatalf("init lost the agent: %s", out)
	}
	// A missing id is named in the error.
	const nobody = "01JD0000000000000000000000"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "revoke", nobody}, `kfa agent revoke: no agent with id "` + nobody + `"`},
		{[]string{"agent", "rotate", nobody}, `kfa agent rotate: no agent with id "` + nobody + `"`},
		{[]string{"records", "show", "no-such-record"}, `kfa records show: no record with id "no-such-record"`},
		{[]string{"records", "delete", "no-such-record"}, `kfa records delete: no record with id "no-such-record"`},
	} {
		if r := kfa(t, append(tc.args, "--data", dir)...); r.code != 1 || r.stderr != tc.want+"\n" {
			t.Errorf("kfa %v: %s\nwant stderr %q", tc.args, r, tc.want)
		}
	}
	// With the server running, init talks to it and changes nothing.
	startServer(t, dir, nil)
	if res := decode[InitResult](t, "init", "--data", dir); res.Created {
		t.Fatalf("init on a served directory: %+v", res)
	}
}

// TestServeBusyPort: kfa serve on a taken address says which flag
// changes it and creates nothing in the data directory.
func TestServeBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	dir := filepath.Join(shortTempDir(t), "data")
	r := kfaAs(t, "./bin/kfa", nil, "serve", "--addr", addr, "--data", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "kfa serve: listen on "+addr+": ") ||
		!strings.Contains(r.stderr, "address already in use\nAnother process listens on "+addr+" (perhaps another kfa serve). "+
			"Stop it, or choose another address with --addr (or KFA_ADDR), e.g. './bin/kfa serve --addr 127.0.0.1:8081'; "+
			"with make: 'make run ADDR=127.0.0.1:8081'. Nothing was written to the data directory.\n") {
		t.Fatalf("busy port: %s", r)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("kfa serve on a busy port created %s: %v", dir, err)
	}
	// The gRPC listener's port, likewise.
	r = kfaAs(t, "./bin/kfa", nil, "serve", "--addr", "127.0.0.1:0", "--grpc-addr", addr, "--data", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "kfa serve: grpc-addr: listen on "+addr+": ") ||
		!strings.Contains(r.stderr, "address already in use\nAnother process listens on "+addr+" (perhaps another kfa serve). "+
			"Stop it, or choose another address with --grpc-addr (or KFA_GRPC_ADDR), e.g. './bin/kfa serve --grpc-addr 127.0.0.1:8081'. "+
			"Nothing was written to the data directory.\n") {
		t.Fatalf("busy gRPC port: %s", r)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("kfa serve on a busy gRPC port created %s: %v", dir, err)
	}
}

// TestServeStoppedLine: the log of a server that was asked to stop ends
// with a line that says kfa stopped and why.
func TestServeStoppedLine(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "data")
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	e := env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: pw, getenv: func(string) string { return "" }}
	code := make(chan int, 1)
	go func() {
		code <- runEnv(ctx, e, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir})
		_ = pw.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), `msg="kfa serving"`) {
			cancel(errors.New("received SIGTERM"))
		}
	}
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, strings.Join(lines, "\n"))
	}
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `level=INFO msg="kfa stopped" reason="received SIGTERM"`) {
		t.Fatalf("the log does not end with why kfa stopped:\n%s", strings.Join(lines, "\n"))
	}
}
