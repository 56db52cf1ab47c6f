package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/knowledge"
)

// exportResult is what `kfa records export --json` prints.
type exportResult struct {
	File    string  `json:"file"`
	Records int     `json:"records"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// bindFilters binds --kind, --product and --environment to o.
func bindFilters(fs *flag.FlagSet, o *knowledge.ExportOptions, what string) {
	fs.StringVar(&o.Kind, "kind", "", what+" of this `kind` only (any case)")
	fs.StringVar(&o.Product, "product", "", what+" of this `product` only (any case)")
	fs.StringVar(&o.Environment, "environment", "", what+" of this `environment` only (any case)")
}

func recordsExport(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var o knowledge.ExportOptions
	fs := newFlagSet("records export", "kfa records export [--kind K] [--product P] [--environment E] [FILE|-] [--json]",
		"Write the records as JSON Lines, in id order, one record per line in the import format with its\n"+
			"updatedAt: `kfa records import` reads the file back unchanged, and exporting again gives the same\n"+
			"bytes. Without FILE, or with -, the lines go to stdout and the summary to stderr. A FILE is written\n"+
			"under a temporary name and renamed into place when complete. Works while kfa serve runs.", e,
		"kfa records export records-backup.jsonl",
		"kfa records export --kind fix - | gzip > fixes.jsonl.gz")
	d.bind(fs)
	bindFilters(fs, &o, "export records")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("at most one FILE (or - for stdout), got %d arguments", len(pos))
	}
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	var af *atomicFile
	if name != "-" {
		if err := dirExists(filepath.Dir(name)); err != nil {
			return err
		}
		if af, err = createAtomic(name); err != nil {
			return fmt.Errorf("create %s: %w", name, unwrapPath(err))
		}
		defer af.abort() // a no-op once committed
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	var out io.Writer = e.stdout
	if af != nil {
		out = af
	}
	cw := &lineCounter{w: out}
	if err := c.ExportRecords(ctx, o, cw); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if af != nil {
		if err := af.sync(); err != nil {
			return err
		}
		if err := af.commit(); err != nil {
			return fmt.Errorf("move the export into place: %w", err)
		}
	}
	res := exportResult{File: name, Records: cw.lines, Bytes: cw.bytes, Seconds: time.Since(start).Seconds()}
	summary := e.stdout
	if af == nil {
		summary = e.stderr // stdout holds the records
	}
	if d.json {
		return printJSON(summary, res)
	}
	dest := "stdout"
	if af != nil {
		dest = oneLine(name)
	}
	fmt.Fprintf(summary, "Exported %s (%s) to %s in %s.\n", plural(res.Records, "record", "records"), humanBytes(res.Bytes), dest,
		time.Since(start).Round(time.Millisecond))
	return nil
}

// lineCounter counts the lines and bytes written through it.
type lineCounter struct {
	w     io.Writer
	lines int
	bytes int64
}

func (l *lineCounter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	l.bytes += int64(n)
	for _, b := range p[:n] {
		if b == '\n' {
			l.lines++
		}
	}
	return n, err
}

// deleteResult is what `kfa records delete --json` prints.
type deleteResult struct {
	Requested int      `json:"requested"`
	Deleted   int      `json:"deleted"`
	NotFound  []string `json:"notFound"`
}

// deleteBatch is how many ids one call deletes, in one transaction.
const deleteBatch = 500

func recordsDelete(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var o knowledge.ExportOptions
	var from string
	fs := newFlagSet("records delete", "kfa records delete ID... | --from FILE | --kind K [--product P] [--environment E] [--json]",
		"Delete knowledge records: the ids given, the ids of a file (one a line; - for stdin; blank lines and\n"+
			"lines starting with # are skipped), or every record of a kind, product or environment. Deletes go\n"+
			"in batches of 500, one transaction each, with a progress bar on a terminal. Ids that name no record\n"+
			"are listed and make the exit status 1; the others are deleted. Search stops finding the deleted\n"+
			"records when the command returns.", e,
		"kfa records delete go-context-deadline-exceeded",
		"kfa records delete old-1 old-2 old-3",
		"kfa records delete --from stale-ids.txt",
		"kfa records delete --product python --json")
	d.bind(fs)
	fs.StringVar(&from, "from", "", "read the ids from this `file`, one a line (- for stdin)")
	bindFilters(fs, &o, "delete the records")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	filter := o != (knowledge.ExportOptions{})
	sources := 0
	for _, given := range []bool{len(pos) > 0, from != "", filter} {
		if given {
			sources++
		}
	}
	if sources != 1 {
		return usagef("give record ids, or --from FILE, or --kind/--product/--environment (one of the three)")
	}
	var ids []string
	switch {
	case from != "":
		if ids, err = readIDs(from, e.stdin); err != nil {
			return err
		}
	case len(pos) > 0:
		ids = pos
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	if filter {
		if ids, err = matchingIDs(ctx, c, o); err != nil {
			return err
		}
	}
	ids = unique(ids)
	res := deleteResult{Requested: len(ids), NotFound: []string{}}
	var progress atomic.Int64
	stop := showDeleteProgress(e.stderr, &progress, len(ids))
	for start := 0; start < len(ids); start += deleteBatch {
		r, err := c.DeleteRecords(ctx, ids[start:min(len(ids), start+deleteBatch)])
		if err != nil {
			stop()
			return fmt.Errorf("delete (%d of %s deleted before this): %w", res.Deleted, plural(len(ids), "record", "records"), plain(err))
		}
		res.Deleted += len(r.Deleted)
		res.NotFound = append(res.NotFound, r.NotFound...)
		progress.Add(int64(len(r.Deleted) + len(r.NotFound)))
	}
	stop()
	if d.json {
		if err := printJSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		printDelete(e.stdout, res, filter)
	}
	switch {
	case len(res.NotFound) == 1 && res.Requested == 1:
		return fmt.Errorf("no record with id %q", oneLine(res.NotFound[0]))
	case len(res.NotFound) > 0:
		return fmt.Errorf("%d of %s name no record: %s", len(res.NotFound), plural(res.Requested, "id", "ids"), idList(res.NotFound))
	}
	return nil
}

func printDelete(w io.Writer, res deleteResult, filter bool) {
	switch {
	case res.Requested == 0 && filter:
		fmt.Fprintln(w, "No record matches the filter; nothing deleted.")
	case res.Deleted == 1 && res.Requested == 1:
		fmt.Fprintln(w, "Deleted 1 record.")
	case res.Deleted > 0 || len(res.NotFound) == 0:
		fmt.Fprintf(w, "Deleted %d of %s.\n", res.Deleted, plural(res.Requested, "record", "records"))
	}
}

// idList names ids in a message: the first 20, then how many more.
func idList(ids []string) string {
	const show = 20
	quoted := make([]string, 0, min(len(ids), show))
	for _, id := range ids[:min(len(ids), show)] {
		quoted = append(quoted, fmt.Sprintf("%q", oneLine(id)))
	}
	s := strings.Join(quoted, ", ")
	if len(ids) > show {
		s += fmt.Sprintf(" and %d more", len(ids)-show)
	}
	return s
}

// readIDs reads one id a line from the file name (- for stdin), skipping
// blank lines and # comments.
func readIDs(name string, stdin io.Reader) ([]string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("open the ids file: %w", unwrapPath(err))
		}
		defer f.Close()
		r = f
	}
	var ids []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ids = append(ids, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the ids file: %w", err)
	}
	return ids, nil
}

// matchingIDs lists the ids of the records with o's kind, product and
// environment.
func matchingIDs(ctx context.Context, c *client.Client, o knowledge.ExportOptions) ([]string, error) {
	var ids []string
	after := ""
	for {
		p, err := c.Records(ctx, after, knowledge.MaxPageSize)
		if err != nil {
			return nil, err
		}
		for _, r := range p.Records {
			if (o.Kind == "" || strings.EqualFold(o.Kind, r.Kind)) && (o.Product == "" || strings.EqualFold(o.Product, r.Product)) &&
				(o.Environment == "" || strings.EqualFold(o.Environment, r.Environment)) {
				ids = append(ids, r.ID)
			}
		}
		if p.NextAfter == "" {
			return ids, nil
		}
		after = p.NextAfter
	}
}

// unique drops repeated ids, keeping the first of each.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
}

// showDeleteProgress reports how many of total ids were handled: a bar on
// a terminal, otherwise a line every plainProgressEvery. The returned
// function ends the display.
func showDeleteProgress(w io.Writer, done *atomic.Int64, total int) func() {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && total > deleteBatch {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("deleting"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
		)
		quit := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				_ = bar.Set64(done.Load())
				select {
				case <-quit:
					return
				case <-t.C:
				}
			}
		})
		return func() {
			close(quit)
			wg.Wait()
			_ = bar.Set64(done.Load())
			_ = bar.Finish()
			fmt.Fprintln(w)
		}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(plainProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintf(w, "kfa records delete: %d of %s done\n", done.Load(), plural(total, "id", "ids"))
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}
