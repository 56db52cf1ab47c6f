package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

func runCompletion(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("completion", "kfa completion bash|zsh|fish",
		"Print a shell completion script for kfa's commands, subcommands and flags. It is made\n"+
			"from this binary's own help, so it matches its version.", e,
		"kfa completion bash > /etc/bash_completion.d/kfa",
		"source <(kfa completion bash)",
		"kfa completion zsh > \"${fpath[1]}/_kfa\"",
		"kfa completion fish > ~/.config/fish/completions/kfa.fish")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "a shell: bash, zsh or fish"); err != nil {
		return err
	}
	specs := completionSpecs(ctx)
	switch pos[0] {
	case "bash":
		writeBash(e.stdout, specs)
	case "zsh":
		fmt.Fprintln(e.stdout, "#compdef kfa")
		fmt.Fprintln(e.stdout, "# kfa completion for zsh, through zsh's bash completion support.")
		fmt.Fprintln(e.stdout, "autoload -U +X bashcompinit && bashcompinit")
		writeBash(e.stdout, specs)
	case "fish":
		writeFish(e.stdout, specs)
	default:
		return usagef("unknown shell %q (want bash, zsh or fish)", pos[0])
	}
	return nil
}

// compSpec is what completion knows of one command: its summary and
// flags, or its subcommands and theirs.
type compSpec struct {
	name    string
	summary string
	flags   []compFlag
	subs    []compSpec
}

// compFlag is one flag: its name without dashes, whether it takes a
// value, and its one-line description.
type compFlag struct {
	name, desc string
	value      bool
}

// flagNames are the flags as typed: --name.
func flagNames(fl []compFlag) []string {
	out := make([]string, len(fl))
	for i, f := range fl {
		out[i] = "--" + f.name
	}
	return out
}

var (
	flagLine  = regexp.MustCompile(`(?m)^  --([A-Za-z0-9][A-Za-z0-9-]*)( \S+)?\n    \t(.*)$`)
	subLine   = regexp.MustCompile(`(?m)^  ([a-z][a-z-]*) +(.+)$`)
	groupLine = regexp.MustCompile(`(?m)^Usage: kfa \S+ ([a-z][a-z-]*(?:\|[a-z][a-z-]*)+)`)
)

// completionSpecs asks every command for its help and reads the flags
// and subcommands from it.
func completionSpecs(ctx context.Context) []compSpec {
	help := func(run func(context.Context, env, []string) error, args ...string) string {
		var buf bytes.Buffer
		_ = run(ctx, env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &buf, getenv: func(string) string { return "" }}, args)
		return buf.String()
	}
	flags := func(text string) []compFlag {
		var out []compFlag
		for _, m := range flagLine.FindAllStringSubmatch(text, -1) {
			out = append(out, compFlag{name: m[1], value: m[2] != "", desc: m[3]})
		}
		return append(out, compFlag{name: "help", desc: "show the help"})
	}
	var specs []compSpec
	for _, c := range commands() {
		text := help(c.run, "-h")
		spec := compSpec{name: c.name, summary: c.summary}
		if m := groupLine.FindStringSubmatch(text); m != nil {
			summaries := map[string]string{}
			for _, sm := range subLine.FindAllStringSubmatch(text, -1) {
				summaries[sm[1]] = sm[2]
			}
			for _, sub := range strings.Split(m[1], "|") {
				spec.subs = append(spec.subs, compSpec{name: sub, summary: summaries[sub], flags: flags(help(c.run, sub, "-h"))})
			}
		} else if c.name == "completion" {
			spec.subs = []compSpec{{name: "bash"}, {name: "zsh"}, {name: "fish"}}
		} else {
			spec.flags = flags(text)
		}
		specs = append(specs, spec)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].name < specs[j].name })
	return specs
}

func writeBash(w io.Writer, specs []compSpec) {
	names := []string{"help"}
	for _, s := range specs {
		names = append(names, s.name)
	}
	fmt.Fprintf(w, `# kfa completion for bash. Load it with: source <(kfa completion bash)
_kfa() {
    local cur prev cmd sub opts
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    cmd="${COMP_WORDS[1]}"
    sub="${COMP_WORDS[2]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "%s" -- "$cur"))
        return
    fi
    case "$prev" in
        --data|--admin-socket) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    opts=""
    case "$cmd" in
`, strings.Join(names, " "))
	for _, s := range specs {
		if len(s.subs) == 0 {
			fmt.Fprintf(w, "        %s) opts=%q ;;\n", s.name, strings.Join(flagNames(s.flags), " "))
			continue
		}
		var subNames []string
		for _, sub := range s.subs {
			subNames = append(subNames, sub.name)
		}
		fmt.Fprintf(w, "        %s)\n            if [[ $COMP_CWORD -eq 2 ]]; then\n", s.name)
		fmt.Fprintf(w, "                COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n            fi\n", strings.Join(subNames, " "))
		fmt.Fprintf(w, "            case \"$sub\" in\n")
		for _, sub := range s.subs {
			if len(sub.flags) > 0 {
				fmt.Fprintf(w, "                %s) opts=%q ;;\n", sub.name, strings.Join(flagNames(sub.flags), " "))
			}
		}
		fmt.Fprintf(w, "            esac ;;\n")
	}
	fmt.Fprint(w, `    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _kfa kfa
`)
}

// writeFish writes a fish completion: commands, then each group's
// subcommands, then the flags of each command or subcommand, with the
// descriptions from the help.
func writeFish(w io.Writer, specs []compSpec) {
	fmt.Fprintln(w, "# kfa completion for fish. Load it with: kfa completion fish | source")
	fmt.Fprintln(w, "complete -c kfa -f")
	var all []string
	for _, s := range specs {
		all = append(all, s.name)
	}
	fmt.Fprintf(w, "complete -c kfa -n 'not __fish_seen_subcommand_from %s' -a help -d 'help on a command'\n", strings.Join(all, " "))
	for _, s := range specs {
		fmt.Fprintf(w, "complete -c kfa -n 'not __fish_seen_subcommand_from %s' -a %s -d %s\n", strings.Join(all, " "), s.name, fishQuote(s.summary))
	}
	for _, s := range specs {
		if len(s.subs) == 0 {
			writeFishFlags(w, "__fish_seen_subcommand_from "+s.name, s.flags)
			continue
		}
		var names []string
		for _, sub := range s.subs {
			names = append(names, sub.name)
		}
		for _, sub := range s.subs {
			fmt.Fprintf(w, "complete -c kfa -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %s -d %s\n",
				s.name, strings.Join(names, " "), sub.name, fishQuote(sub.summary))
			writeFishFlags(w, "__fish_seen_subcommand_from "+s.name+"; and __fish_seen_subcommand_from "+sub.name, sub.flags)
		}
	}
}

func writeFishFlags(w io.Writer, cond string, flags []compFlag) {
	for _, f := range flags {
		arg := ""
		switch {
		case f.name == "data":
			arg = " -x -a '(__fish_complete_directories)'"
		case f.name == "admin-socket":
			arg = " -r -F"
		case f.value:
			arg = " -x"
		}
		fmt.Fprintf(w, "complete -c kfa -n '%s' -l %s%s -d %s\n", cond, f.name, arg, fishQuote(f.desc))
	}
}

// fishQuote single-quotes s for fish, where only \ and ' are special.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
