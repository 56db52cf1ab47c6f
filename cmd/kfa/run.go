package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// env holds what a command may touch: its streams and the environment.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one CLI command.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the server", runServe},
		{"agent", "create, rotate, revoke and list agents", runAgent},
		{"tasks", "list, show and cancel tasks of every agent", runTasks},
		{"discussions", "list and show discussions", runDiscussions},
		{"inbox", "list an agent's inbox", runInbox},
		{"reply", "post a reply on a discussion as an agent", runReply},
		{"stats", "counts, file size, oldest waiting task", runStats},
		{"check", "verify the database: bbolt and kfa invariants", runCheck},
		{"backup", "write a consistent copy of the live database", runBackup},
		{"restore", "install a backup into a stopped data directory", runRestore},
		{"completion", "print a bash or zsh completion script", runCompletion},
		{"records", "import, list, show and delete knowledge records; rebuild the search index", runRecords},
		{"version", "print the version", runVersion},
	}
}

// usageError is a mistake in how kfa was invoked: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// run is the whole program; main only picks the exit code it returns.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	return runEnv(ctx, e, args)
}

func runEnv(ctx context.Context, e env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			return runEnv(ctx, e, []string{args[1], "-h"})
		}
		printUsage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		}
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(e.stderr, "kfa %s: %s\nRun 'kfa help %s' for usage.\n", name, ue.msg, name)
			return exitUsage
		}
		fmt.Fprintf(e.stderr, "kfa %s: %s\n", name, err)
		return exitError
	}
	fmt.Fprintf(e.stderr, "kfa: unknown command %q\n\n", name)
	printUsage(e.stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "kfa: knowledge for agents, an A2A server and its operator CLI.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: kfa <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes --data DIR (default ./data, or $KFA_DATA) and, where it prints")
	fmt.Fprintln(w, "something a script may read, --json. Flags may come before or after arguments.")
	fmt.Fprintln(w, "Run 'kfa help <command>' for a command's flags and examples.")
}

func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlagSet("version", "kfa version", "Print the version of this kfa binary.", e)
	if _, err := parseArgs(fs, args, e); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, version)
	return nil
}

// newFlagSet returns a FlagSet whose errors and help go to e.stderr.
func newFlagSet(name, synopsis, help string, e env, examples ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: %s\n\n%s\n", synopsis, help)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if len(names) > 0 {
			fmt.Fprintln(e.stderr, "\nFlags:")
			fs.PrintDefaults()
		}
		if len(examples) > 0 {
			fmt.Fprintln(e.stderr, "\nExamples:")
			for _, ex := range examples {
				fmt.Fprintf(e.stderr, "  %s\n", ex)
			}
		}
	}
	return fs
}

// parseArgs parses flags wherever they appear among the arguments, so that
// `kfa agent rotate ID --json` and `kfa agent rotate --json ID` both work,
// then applies KFA_* variables to the flags not given. It returns the
// positional arguments. Everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string, e env) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, applyEnv(fs, e)
}

// applyEnv sets each flag not given on the command line from KFA_<NAME>
// (upper case, dashes as underscores), so flags beat the environment,
// which beats the defaults.
func applyEnv(fs *flag.FlagSet, e env) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	for _, n := range names {
		if given[n] {
			continue
		}
		key := "KFA_" + strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
		v := e.getenv(key)
		if v == "" {
			continue
		}
		if err := fs.Set(n, v); err != nil {
			return usagef("%s=%q: %v", key, v, err)
		}
	}
	return nil
}

// wantArgs checks the number of positional arguments.
func wantArgs(pos []string, n int, names string) error {
	if len(pos) != n {
		if n == 0 {
			return usagef("unexpected arguments: %s", strings.Join(pos, " "))
		}
		return usagef("want %s, got %d argument(s)", names, len(pos))
	}
	return nil
}
