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
	fs := newFlagSet("completion", "kfa completion bash|zsh",
		"Print a shell completion script for kfa's commands, subcommands and flags. It is made\n"+
			"from this binary's own help, so it matches its version.", e,
		"kfa completion bash > /etc/bash_completion.d/kfa",
		"source <(kfa completion bash)",
		"kfa completion zsh > \"${fpath[1]}/_kfa\"")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "a shell: bash or zsh"); err != nil {
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
	default:
		return usagef("unknown shell %q (want bash or zsh)", pos[0])
	}
	return nil
}

// compSpec is what completion knows of one command: its flags, or its
// subcommands and theirs.
type compSpec struct {
	name  string
	flags []string
	subs  []compSpec
}

var (
	flagLine  = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][A-Za-z0-9-]*)`)
	groupLine = regexp.MustCompile(`(?m)^Usage: kfa \S+ ([a-z]+(?:\|[a-z]+)+)`)
)

// completionSpecs asks every command for its help and reads the flags
// and subcommands from it.
func completionSpecs(ctx context.Context) []compSpec {
	help := func(run func(context.Context, env, []string) error, args ...string) string {
		var buf bytes.Buffer
		_ = run(ctx, env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &buf, getenv: func(string) string { return "" }}, args)
		return buf.String()
	}
	flags := func(text string) []string {
		var out []string
		for _, m := range flagLine.FindAllStringSubmatch(text, -1) {
			out = append(out, "--"+m[1])
		}
		return append(out, "--help")
	}
	var specs []compSpec
	for _, c := range commands() {
		text := help(c.run, "-h")
		spec := compSpec{name: c.name}
		if m := groupLine.FindStringSubmatch(text); m != nil {
			for _, sub := range strings.Split(m[1], "|") {
				spec.subs = append(spec.subs, compSpec{name: sub, flags: flags(help(c.run, sub, "-h"))})
			}
		} else if c.name == "completion" {
			spec.subs = []compSpec{{name: "bash"}, {name: "zsh"}}
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
			fmt.Fprintf(w, "        %s) opts=%q ;;\n", s.name, strings.Join(s.flags, " "))
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
				fmt.Fprintf(w, "                %s) opts=%q ;;\n", sub.name, strings.Join(sub.flags, " "))
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
