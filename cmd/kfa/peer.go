package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

func runPeer(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "peer", []subcommand{
		{"add", "follow another kfa, and forward asks to it", peerAdd},
		{"list", "list the peers: state, last sync, lag, last error, documents", peerList},
		{"pause", "stop following and forwarding to a peer until it is resumed", peerPause(false)},
		{"resume", "follow and forward to a paused peer again, at once", peerPause(true)},
		{"remove", "stop for good; --purge removes what was followed from it", peerRemove},
	}, args)
}

func peerAdd(ctx context.Context, e env, args []string) error {
	var (
		d        dataFlags
		token    string
		follow   bool
		forward  bool
		perMin   int
		docBytes int
	)
	fs := newFlagSet("peer add", "kfa peer add NAME URL --token TOKEN [--forward-asks] [--follow=true] [--json]",
		"Add the kfa at URL as a peer named NAME. TOKEN is a credential for an agent on that\n"+
			"server, made by its operator: read to follow its change feed, post as well to forward\n"+
			"asks. kfa reads the peer's agent card first and, when it is signed, pins its key.\n"+
			"With --forward-asks, every discussion opened here is also asked there (a forwarded\n"+
			"question is public there); the answer comes back here as a reply by name@NAME.", e,
		"kfa peer add b https://kfa-b.example.org --token kfa_...",
		"kfa peer add b https://kfa-b.example.org --token kfa_... --forward-asks",
		"kfa peer add b https://kfa-b.example.org --token kfa_... --forward-asks --follow=false")
	d.bind(fs)
	fs.StringVar(&token, "token", "", "the `TOKEN` of this server's agent on the peer")
	fs.BoolVar(&follow, "follow", true, "follow the peer's change feed: its documents become searchable here")
	fs.BoolVar(&forward, "forward-asks", false, "ask every discussion opened here on the peer too")
	fs.IntVar(&perMin, "max-docs-per-minute", 0, "the most `N` documents the peer's feed may bring a minute (default 60000)")
	fs.IntVar(&docBytes, "max-doc-bytes", 0, "the most `BYTES` of text one of the peer's documents may hold (default 262144)")
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 2, "NAME and URL", false)
	if err != nil {
		return err
	}
	defer done()
	if token == "" {
		return usagef("--token is required: a credential for this server's agent on the peer")
	}
	p, err := c.AddPeer(ctx, api.PeerAddRequest{Name: pos[0], URL: pos[1], Token: token, Follow: &follow,
		ForwardAsks: forward, MaxDocsPerMinute: perMin, MaxDocBytes: docBytes})
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, p)
	}
	fmt.Fprintf(e.stdout, "Added peer %s: %s (%s).\n", p.Name, p.URL, oneLine(clip(p.AgentName, 100)))
	if p.KeyPinned {
		fmt.Fprintln(e.stdout, "Its agent card is signed; its key is pinned.")
	}
	if p.Follow {
		fmt.Fprintln(e.stdout, "Its change feed is followed: its documents become searchable here, marked as from "+p.Name+".")
	}
	if p.ForwardAsks {
		fmt.Fprintln(e.stdout, "Discussions opened here are also asked there; its answers come back as replies.")
	}
	return nil
}

func peerList(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("peer list", "kfa peer list [--json]",
		"List the peers: name, URL, state (ok, failing, paused), when the follower last read\n"+
			"the peer's feed, its lag in seconds, the last error, how many documents are followed,\n"+
			"and whether asks are forwarded.", e,
		"kfa peer list",
		"kfa peer list --json | jq '.peers[] | select(.state == \"failing\")'")
	d.bind(fs)
	_, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	defer done()
	l, err := c.Peers(ctx)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, l)
	}
	if len(l.Peers) == 0 {
		fmt.Fprintln(e.stdout, "No peers. Add one with kfa peer add NAME URL --token TOKEN.")
		return nil
	}
	now := time.Now()
	for _, p := range l.Peers {
		var jobs []string
		if p.Follow {
			jobs = append(jobs, "followed")
		}
		if p.ForwardAsks {
			jobs = append(jobs, "asks forwarded")
		}
		state := p.State
		if p.Purging {
			state = "removed, purging what was followed"
		}
		fmt.Fprintf(e.stdout, "%s  %s  %s  (%s)\n", p.Name, p.URL, state, strings.Join(jobs, ", "))
		sync := "never"
		if t, err := a2a.ParseTime(p.LastSync); err == nil && p.LastSync != "" {
			sync = relTime(t, now)
		}
		fmt.Fprintf(e.stdout, "  last sync %s, lag %ds, %s\n", sync, p.LagSeconds, plural(p.Documents, "document", "documents"))
		if p.LastError != "" {
			at, _ := a2a.ParseTime(p.LastErrorAt)
			fmt.Fprintf(e.stdout, "  last error (%s): %s\n", relTime(at, now), oneLine(clip(p.LastError, 300)))
		}
	}
	return nil
}

// peerPause is kfa peer pause (resume false) or resume.
func peerPause(resume bool) func(ctx context.Context, e env, args []string) error {
	name, help := "pause", "Stop following and forwarding asks to the peer NAME until it is resumed. Nothing is\n"+
		"lost: resume goes on from where the follower stood."
	if resume {
		name, help = "resume", "Follow and forward asks to the paused peer NAME again, at once (a failing peer is\n"+
			"tried again now, whatever its backoff said)."
	}
	return func(ctx context.Context, e env, args []string) error {
		var d dataFlags
		fs := newFlagSet("peer "+name, "kfa peer "+name+" NAME [--json]", help, e, "kfa peer "+name+" b")
		d.bind(fs)
		pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "NAME", false)
		if err != nil {
			return err
		}
		defer done()
		call := c.PausePeer
		if resume {
			call = c.ResumePeer
		}
		p, err := call(ctx, pos[0])
		if err != nil {
			return plain(err)
		}
		if d.json {
			return printJSON(e.stdout, p)
		}
		fmt.Fprintf(e.stdout, "Peer %s is %s.\n", p.Name, p.State)
		return nil
	}
}

func peerRemove(ctx context.Context, e env, args []string) error {
	var (
		d     dataFlags
		purge bool
	)
	fs := newFlagSet("peer remove", "kfa peer remove NAME [--purge]",
		"Stop following and forwarding asks to the peer NAME for good. What was followed from it\n"+
			"stays searchable (marked as from NAME) unless --purge, which removes it from search and\n"+
			"the web at once. Asks in flight are dropped; the local tasks keep waiting on local replies.", e,
		"kfa peer remove b",
		"kfa peer remove b --purge")
	d.bind(fs)
	fs.BoolVar(&purge, "purge", false, "remove everything followed from the peer too")
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "NAME", false)
	if err != nil {
		return err
	}
	defer done()
	if err := c.RemovePeer(ctx, pos[0], purge); err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, map[string]any{"name": pos[0], "removed": true, "purged": purge})
	}
	if purge {
		fmt.Fprintf(e.stdout, "Removed peer %s and what was followed from it.\n", pos[0])
	} else {
		fmt.Fprintf(e.stdout, "Removed peer %s; what was followed from it stays searchable.\n", pos[0])
	}
	return nil
}
