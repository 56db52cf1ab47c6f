package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
)

// subcommand is one verb of a command group (kfa tasks list, ...).
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

// runGroup dispatches a command group to its subcommands, printing the
// group's help for "-h", "help" or no subcommand.
func runGroup(ctx context.Context, e env, group string, subs []subcommand, args []string) error {
	names := make([]string, len(subs))
	width := 8
	for i, s := range subs {
		names[i] = s.name
		width = max(width, len(s.name))
	}
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: %s %s %s [flags] [arguments]\n\n", e.name(), group, strings.Join(names, "|"))
		for _, s := range subs {
			fmt.Fprintf(w, "  %-*s %s\n", width, s.name, s.summary)
		}
		fmt.Fprintf(w, "\nRun '%s %s <subcommand> -h' for its flags and examples.\n", e.name(), group)
	}
	if len(args) == 0 {
		usage(e.stderr)
		return usagef("missing subcommand")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(e.stderr)
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return inCommand(s.run(ctx, e, args[1:]), group+" "+s.name)
		}
	}
	return usagef("unknown subcommand %q%s (want %s)", args[0], didYouMean(args[0], names), strings.Join(names, ", "))
}

// plain turns an error answer of the admin channel into its message: the
// reason codes are for programs, the message is for the operator.
func plain(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Message != "" {
		return errors.New(ce.Message)
	}
	return err
}

// parseState reads a task state: a TASK_STATE_* name, or its short form
// (working, completed, canceled, ...), in any case.
func parseState(s string) (a2a.TaskState, error) {
	if st, ok := a2a.ParseTaskState(strings.TrimSpace(s)); ok {
		return st, nil
	}
	short := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if short == "CANCELLED" {
		short = "CANCELED"
	}
	if st, ok := a2a.ParseTaskState("TASK_STATE_" + short); ok && short != "" {
		return st, nil
	}
	return "", fmt.Errorf("unknown task state %q (want working, completed or canceled, or a TASK_STATE_* name)", s)
}

// shortState is the short, lower-case form of a state name for tables.
func shortState(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_")), "_", "-")
}

// maxPage is the largest page the admin API serves; --limit beyond it
// takes several pages.
const maxPage = 100

// collect fetches pages until it has limit items or the listing ends, and
// returns them with the token of the page after them ("" at the end).
func collect[T any](limit int, after string, fetch func(size int, token string) ([]T, string, error)) ([]T, string, error) {
	all := []T{} // never null in JSON
	token := after
	for {
		items, next, err := fetch(min(maxPage, limit-len(all)), token)
		if err != nil {
			return nil, "", err
		}
		all = append(all, items...)
		token = next
		if next == "" || len(all) >= limit {
			return all, token, nil
		}
	}
}

// humanBytes renders a byte count with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// textBlock makes untrusted multi-line text safe for a terminal: control
// characters other than newlines become spaces, and every line is
// indented so it cannot pass for kfa's own output.
func textBlock(s, indent string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = indent + oneLine(l)
	}
	return strings.Join(lines, "\n")
}

// notFound names the missing thing in a 404 of the admin channel, whose
// message for records and agents does not say which id was asked for.
func notFound(err error, what, id string) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.StatusCode == 404 {
		return fmt.Errorf("no %s with id %q", what, oneLine(id))
	}
	return plain(err)
}
