package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/knowledge"
)

func runRecords(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "records", []subcommand{
		{"import", "upsert records from a JSON Lines file (or - for stdin)", recordsImport},
		{"list", "list records in id order", recordsList},
		{"show", "print one record", recordsShow},
		{"export", "write the records as JSON Lines that import reads back", recordsExport},
		{"delete", "delete records by id, from a file of ids, or by kind, product or environment", recordsDelete},
		{"reindex", "rebuild the search index from the records and discussions (reads synonyms.txt again)", recordsReindex},
	}, args)
}

// importResult is what `kfa records import --json` prints.
type importResult struct {
	File string `json:"file"`
	knowledge.ImportSummary
	Seconds float64 `json:"seconds"`
}

func recordsImport(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var strict bool
	fs := newFlagSet("records import", "kfa records import FILE.jsonl|- [--strict] [--json]",
		"Upsert knowledge records by id from a JSON Lines file, one record per line:\n"+
			`  {"id","kind","title","body" (required), "product","environment","tags","url","updatedAt" (optional)}`+"\n"+
			"Bad lines are reported with their numbers and skipped; with --strict nothing is written if\n"+
			"any line is bad. Records identical to the stored ones count as unchanged and write nothing.\n"+
			"Works while kfa serve runs (through its admin socket); the records are searchable when the\n"+
			"command returns. Exit status 1 when any line was rejected.", e,
		"kfa records import samples/records.jsonl",
		"kfa records import --strict --json records.jsonl",
		"generate-records | kfa records import -")
	d.bind(fs)
	fs.BoolVar(&strict, "strict", false, "write nothing if any line is bad")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "a file name (or - for stdin)"); err != nil {
		return err
	}
	name := pos[0]
	in, size, closeIn, err := openInput(name, e.stdin)
	if err != nil {
		return err
	}
	defer closeIn()
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()

	start := time.Now()
	pr := &progressReader{r: in}
	stop := showProgress(e.stderr, pr, size)
	sum, err := c.ImportRecords(ctx, pr, strict)
	stop()
	if err != nil {
		var ce *client.Error
		if !errors.As(err, &ce) && ctx.Err() == nil {
			return fmt.Errorf("import %s: %w (the batches committed before the connection broke are kept; "+
				"run the same import again to finish: they count as unchanged)", name, err)
		}
		return fmt.Errorf("import %s: %w", name, err)
	}
	took := time.Since(start)
	if d.json {
		if err := printJSON(e.stdout, importResult{File: name, ImportSummary: sum, Seconds: took.Seconds()}); err != nil {
			return err
		}
	} else {
		printImport(e.stdout, name, sum, took)
	}
	switch {
	case sum.Rejected > 0 && !sum.Written:
		return fmt.Errorf("nothing written: %d of %s rejected (--strict)", sum.Rejected, plural(sum.Lines, "line", "lines"))
	case sum.Rejected > 0:
		return fmt.Errorf("%d of %s rejected and skipped", sum.Rejected, plural(sum.Lines, "line", "lines"))
	}
	return nil
}

func printImport(w io.Writer, name string, sum knowledge.ImportSummary, took time.Duration) {
	fmt.Fprintf(w, "Imported %s in %s: %s, %d added, %d updated, %d unchanged, %d rejected.\n",
		oneLine(name), took.Round(time.Millisecond), plural(sum.Lines, "line", "lines"), sum.Added, sum.Updated, sum.Unchanged, sum.Rejected)
	for _, le := range sum.Errors {
		fmt.Fprintf(w, "  %s\n", oneLine(le.Error()))
	}
	if sum.Unreported > 0 {
		fmt.Fprintf(w, "  ... and %d more rejected lines\n", sum.Unreported)
	}
	if sum.Strict && sum.Rejected > 0 {
		fmt.Fprintln(w, "Nothing was written (--strict). Fix the lines above and import again.")
	}
}

// openInput opens the import source: a file, or stdin for "-". size is
// the file's size, or -1 when unknown.
func openInput(name string, stdin io.Reader) (io.Reader, int64, func(), error) {
	if name == "-" {
		return stdin, -1, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("open import file: %w", err)
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { _ = f.Close() }, nil
}

// progressReader counts what the import has sent.
type progressReader struct {
	r     io.Reader
	bytes atomic.Int64
	lines atomic.Int64
	add   func(int) // the progress bar, when there is one
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.bytes.Add(int64(n))
	p.lines.Add(int64(bytes.Count(b[:n], []byte{'\n'})))
	if p.add != nil && n > 0 {
		p.add(n)
	}
	return n, err
}

// plainProgressEvery is how often progress is printed when stderr is not
// a terminal.
const plainProgressEvery = 2 * time.Second

// showProgress reports the import's progress on w: a progress bar when w
// is a terminal, otherwise a line of counts every plainProgressEvery. The
// returned function ends the display.
func showProgress(w io.Writer, pr *progressReader, size int64) func() {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("importing"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetRenderBlankState(true),
		)
		pr.add = func(n int) { _ = bar.Add(n) }
		return func() {
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
				fmt.Fprintf(w, "kfa records import: sent %s (%s)\n", plural(int(pr.lines.Load()), "line", "lines"), humanBytes(pr.bytes.Load()))
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}

func recordsReindex(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("records reindex", "kfa records reindex [--json]",
		"Rebuild the search index from the records and discussions, reading <data>/synonyms.txt again.\n"+
			"With kfa serve running, the live index is rebuilt while it keeps answering; otherwise the\n"+
			"synonyms file is checked, the index directory deleted, and the next kfa serve rebuilds it.\n"+
			"The index is derived data: nothing is lost. A synonyms file with a bad line is refused (its\n"+
			"line is named) and the index left as it was.", e,
		"kfa records reindex")
	d.bind(fs)
	_, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	st, err := c.ReindexRecords(ctx)
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e.stdout, st)
	}
	if st.Deleted {
		fmt.Fprintf(e.stdout, "No server runs on this data directory: deleted the search index %s; kfa serve rebuilds it when it starts (with %s).\n", oneLine(st.Dir), plural(st.SynonymGroups, "synonym group", "synonym groups"))
		return nil
	}
	fmt.Fprintf(e.stdout, "Rebuilt the search index in %s: %s, %s, %s, at change log position %s.\n",
		time.Since(start).Round(time.Millisecond), plural(st.Records, "record", "records"),
		plural(st.Discussions, "discussion", "discussions"), plural(st.SynonymGroups, "synonym group", "synonym groups"), st.AppliedPosition)
	return nil
}

func recordsList(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var after string
	var limit int
	fs := newFlagSet("records list", "kfa records list [--after ID] [--limit N] [--json]",
		"List records in id order, without their bodies.", e,
		"kfa records list",
		"kfa records list --limit 0 --json   # every record")
	d.bind(fs)
	fs.StringVar(&after, "after", "", "start after this record `id`")
	fs.IntVar(&limit, "limit", 50, "at most this many records; 0 lists them all")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if limit < 0 {
		return usagef("--limit must not be negative")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	var recs []api.Record
	total, next := 0, after
	for {
		size := knowledge.MaxPageSize
		if limit > 0 {
			size = min(size, limit-len(recs))
		}
		p, err := c.Records(ctx, next, size)
		if err != nil {
			return err
		}
		total = p.Total
		recs = append(recs, p.Records...)
		next = p.NextAfter
		if next == "" || (limit > 0 && len(recs) >= limit) {
			break
		}
	}
	if d.json {
		if recs == nil {
			recs = []api.Record{}
		}
		return printJSON(e.stdout, recs)
	}
	now := time.Now()
	t := newTable(e.stdout, "ID", "KIND", "PRODUCT", "ENVIRONMENT", "UPDATED", "TITLE")
	for _, r := range recs {
		updated, _ := a2a.ParseTime(r.UpdatedAt)
		t.row(r.ID, r.Kind, r.Product, r.Environment, relTime(updated, now), r.Title)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if next != "" {
		fmt.Fprintf(e.stdout, "%d of %s; more with --after %s\n", len(recs), plural(total, "record", "records"), oneLine(recs[len(recs)-1].ID))
	}
	return nil
}

func recordsShow(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("records show", "kfa records show ID [--json]", "Print one record with its body.", e,
		"kfa records show bbolt-timeout-open-locked")
	d.bind(fs)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "a record ID", false)
	if err != nil {
		return err
	}
	defer done()
	r, err := c.Record(ctx, pos[0])
	if err != nil {
		return notFound(err, "record", pos[0])
	}
	if d.json {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%s\n  id:          %s\n  kind:        %s\n", oneLine(r.Title), oneLine(r.ID), oneLine(r.Kind))
	for _, f := range []struct{ name, v string }{
		{"product", r.Product}, {"environment", r.Environment}, {"tags", strings.Join(r.Tags, ", ")}, {"url", r.URL},
	} {
		if f.v != "" {
			fmt.Fprintf(e.stdout, "  %-12s %s\n", f.name+":", oneLine(f.v))
		}
	}
	fmt.Fprintf(e.stdout, "  updated:     %s\n\n", oneLine(r.UpdatedAt))
	for _, line := range strings.Split(r.Body, "\n") {
		fmt.Fprintln(e.stdout, oneLine(line))
	}
	return nil
}
