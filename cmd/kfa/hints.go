package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// progName is how hints name kfa: as it was started (./bin/kfa, kfa,
// /usr/local/bin/kfa), so that a hint runs as printed. A binary that
// `go run` built in a temporary directory is just "kfa".
func progName(arg0 string) string {
	if arg0 == "" || strings.Contains(arg0, "go-build") {
		return "kfa"
	}
	return arg0
}

// name is the program name for hints.
func (e env) name() string {
	if e.prog == "" {
		return "kfa"
	}
	return e.prog
}

// kfaCommand finds "kfa <command>" in help text and examples.
var kfaCommand = regexp.MustCompile(`(^|[\s(|;])kfa ([a-z])`)

// cmdline rewrites "kfa <command> ..." in s to use the program name.
func (e env) cmdline(s string) string {
	if e.name() == "kfa" {
		return s
	}
	return kfaCommand.ReplaceAllString(s, "${1}"+strings.ReplaceAll(e.name(), "$", "$$")+" ${2}")
}

// hinted is an error whose message tells the user what to run; hint
// renders it with the program name.
type hinted interface {
	error
	hint(prog string) string
}

// noDatabaseError: a command other than serve and init found no
// database; only those two create one, so a mistyped --data cannot
// quietly start an empty database beside the real one.
type noDatabaseError struct{ dir, path string }

func (e *noDatabaseError) Error() string { return e.hint("kfa") }

func (e *noDatabaseError) hint(prog string) string {
	return fmt.Sprintf("no kfa database at %s: check --data (or KFA_DATA); to start one there, run '%s serve --data %s' "+
		"(or '%s init --data %s')", e.path, prog, e.dir, prog, e.dir)
}

// didYouMean suggests the candidate closest to got, or "": one that got
// is a prefix of ("disc" for "discussions"), else one within a few edits.
func didYouMean(got string, candidates []string) string {
	got = strings.ToLower(got)
	var prefixed []string
	for _, c := range candidates {
		if len(got) >= 3 && strings.HasPrefix(c, got) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return fmt.Sprintf(" (did you mean %q?)", prefixed[0])
	}
	best, bestD := "", 0
	for _, c := range candidates {
		if d := editDistance(got, c); best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	// A slip: at most one edit in three letters, and at least one allowed.
	if best != "" && bestD <= max(1, len(best)/3) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours ("nmae"
// for "name") cost one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

var (
	flagUnknown  = regexp.MustCompile(`^flag provided but not defined: -(.+)$`)
	flagNoValue  = regexp.MustCompile(`^flag needs an argument: -(.+)$`)
	flagBadValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): `)
	flagBadBool  = regexp.MustCompile(`^invalid boolean value "(.*)" for -([^:]+): `)
)

// flagSynonyms are the names other tools give what a kfa flag does, which
// no edit distance finds: each suggests the first of its flags that the
// command has.
var flagSynonyms = map[string][]string{
	"port": {"addr"}, "listen": {"addr"}, "bind": {"addr"}, "host": {"addr"}, "address": {"addr"}, "http": {"addr"},
	"db": {"store", "data"}, "database": {"store", "data"}, "dsn": {"store"}, "database-url": {"store"},
	"postgres": {"store"}, "pg": {"store"},
	"dir": {"data"}, "datadir": {"data"}, "data-dir": {"data"}, "db-dir": {"data"},
	"format": {"json"}, "output": {"json"}, "o": {"json"},
	"url": {"public-url"}, "base-url": {"public-url"}, "external-url": {"public-url"},
}

// flagError rewrites an error of the flag package the way the help
// writes flags (--name), saying what was expected, with a suggestion for
// a mistyped flag, or for another tool's name of one (args are the ones
// parsed, for the value a suggestion can reuse).
func flagError(fs *flag.FlagSet, err error, args []string) string {
	msg := err.Error()
	if m := flagUnknown.FindStringSubmatch(msg); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		s := didYouMean(m[1], names)
		if s != "" {
			s = strings.Replace(s, `"`, "--", 1)
			s = strings.Replace(s, `"`, "", 1)
		} else {
			s = synonymHint(fs, m[1], args)
		}
		return fmt.Sprintf("unknown flag --%s%s", m[1], s)
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value: %s", m[1], valueKind(fs.Lookup(m[1])))
	}
	for _, re := range []*regexp.Regexp{flagBadValue, flagBadBool} {
		if m := re.FindStringSubmatch(msg); m != nil {
			return fmt.Sprintf("--%s %q: want %s", m[2], m[1], valueKind(fs.Lookup(m[2])))
		}
	}
	return msg
}

// synonymHint suggests the flag of fs that another tool calls name, or "".
// --addr takes host and port in one, so its hint shows how, with the
// port given to --port when there was one.
func synonymHint(fs *flag.FlagSet, name string, args []string) string {
	for _, s := range flagSynonyms[strings.ToLower(name)] {
		if fs.Lookup(s) == nil {
			continue
		}
		if s != "addr" {
			return fmt.Sprintf(" (did you mean --%s?)", s)
		}
		port := "8080"
		if v := flagValue(args, name); v != "" && strings.Trim(v, "0123456789") == "" {
			port = v
		}
		return " (did you mean --addr? it takes host:port, such as --addr 127.0.0.1:" + port + ")"
	}
	return ""
}

// flagValue is the value given to --name (or -name) in args: after "=",
// or the next argument; "" when there is none.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			return args[i+1]
		}
	}
	return ""
}

// valueKind says what a flag takes, for errors: "a whole number", ...
func valueKind(f *flag.Flag) string {
	if f == nil {
		return "a value"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number, such as " + exampleNumber(f)
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 30s, 5m or 2h45m"
	}
	name, _ := flag.UnquoteUsage(f)
	if name == "" {
		name = "value"
	}
	return "a " + name
}

// exampleNumber is the flag's default when it is not 0, else 5.
func exampleNumber(f *flag.Flag) string {
	if f.DefValue != "0" && f.DefValue != "" {
		return f.DefValue
	}
	return "5"
}

// printFlags writes the flags of fs as flag.PrintDefaults does, but with
// two dashes, as the docs and completion write them.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		if !isZeroDefault(f) {
			if g, ok := f.Value.(flag.Getter); ok && isString(g.Get()) {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintf(w, "    \t%s\n", usage)
	})
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// cmdError is an error of a subcommand; kfa prints it under the
// subcommand's full name ("kfa agent create: ...").
type cmdError struct {
	cmd string
	err error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// inCommand ties err to the subcommand cmd: a usage error points at that
// subcommand's help, and any other error is printed under its name.
func inCommand(err error, cmd string) error {
	if err == nil {
		return nil
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.cmd == "" {
			ue.cmd = cmd
		}
		return err
	}
	return &cmdError{cmd: cmd, err: err}
}
