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
	// prog is the name kfa was started with (./bin/kfa, kfa, ...): the
	// hints it prints use it, so that they run as shown. Empty means kfa.
	prog string
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
		{"migrate", "copy the data between the bbolt file and PostgreSQL", runMigrate},
		{"init", "create an empty database in a data directory", runInit},
		{"completion", "print a bash, zsh or fish completion script", runCompletion},
		{"records", "import, list, show and delete knowledge records; rebuild the search index", runRecords},
		{"mcp", "serve the MCP tools (search, fetch, get_changes, whoami) over stdio", runMCP},
		{"push", "list and retry push notification deliveries; rotate the signing key", runPush},
		{"moderation", "review flags; hide, unhide and dismiss; read the moderation log", runModeration},
		{"peer", "follow other kfa servers and forward asks to them: add, list, pause, resume, remove", runPeer},
		{"version", "print the version, commit, Go version and build date", runVersion},
	}
}

// usageError is a mistake in how kfa was invoked: exit code 2. cmd, when
// set, is the command whose help explains it ("agent create").
type usageError struct{ msg, cmd string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// run is the whole program; main only picks the exit code it returns.
// argv is the command line with the program's name first.
func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, prog: progName(argv[0])}
	return runEnv(ctx, e, argv[1:])
}

func runEnv(ctx context.Context, e env, args []string) int {
	if len(args) == 0 {
		printUsage(e, e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 {
			return runEnv(ctx, e, append(append([]string{}, args[1:]...), "-h"))
		}
		printUsage(e, e.stdout)
		return exitOK
	case "--version", "-version", "-v":
		name = "version"
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
			if ue.cmd == "" {
				ue.cmd = name
			}
			fmt.Fprintf(e.stderr, "kfa %s: %s\nRun '%s %s -h' for usage.\n", ue.cmd, ue.msg, e.name(), ue.cmd)
			return exitUsage
		}
		var ce *cmdError
		if errors.As(err, &ce) {
			name = ce.cmd
		}
		var h hinted
		if errors.As(err, &h) {
			fmt.Fprintf(e.stderr, "kfa %s: %s\n", name, h.hint(e.name()))
			return exitError
		}
		fmt.Fprintf(e.stderr, "kfa %s: %s\n", name, err)
		return exitError
	}
	names := make([]string, 0, len(commands())+1)
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(e.stderr, "kfa: unknown command %q%s; run '%s help' for the list\n", name, didYouMean(name, append(names, "help")), e.name())
	return exitUsage
}

func printUsage(e env, w io.Writer) {
	fmt.Fprintln(w, "kfa: knowledge for agents, an A2A server and its operator CLI.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Usage: %s <command> [flags] [arguments]\n", e.name())
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes --data DIR (default ./data, or $KFA_DATA) and, where it prints")
	fmt.Fprintln(w, "something a script may read, --json. Flags may come before or after arguments.")
	fmt.Fprintf(w, "Run '%s help <command>' for a command's flags and examples; '%s --version' for the version.\n", e.name(), e.name())
}

// newFlagSet returns a FlagSet for one command. Its help (for -h) goes to
// e.stderr, its flags shown with "--" as the docs write them; parse errors
// are not printed by the flag package but returned, to be printed once.
func newFlagSet(name, synopsis, help string, e env, examples ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: %s\n\n%s\n", e.cmdline(synopsis), help)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if len(names) > 0 {
			fmt.Fprintln(e.stderr, "\nFlags:")
			printFlags(e.stderr, fs)
		}
		if len(examples) > 0 {
			fmt.Fprintln(e.stderr, "\nExamples:")
			for _, ex := range examples {
				fmt.Fprintf(e.stderr, "  %s\n", e.cmdline(ex))
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
	// The flag package calls Usage on every error; only -h should print it.
	help := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = help }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, err
			}
			return nil, &usageError{msg: flagError(fs, err, args), cmd: fs.Name()}
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
	if err := applyEnv(fs, e); err != nil {
		return nil, err
	}
	return pos, nil
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
			return &usageError{msg: fmt.Sprintf("%s=%q: want %s (it sets --%s)", key, v, valueKind(fs.Lookup(n)), n), cmd: fs.Name()}
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
