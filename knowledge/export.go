package knowledge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kfa-project/kfa/input"
)

// ExportOptions select the records an export writes.
type ExportOptions struct {
	// Kind, Product and Environment keep only the records with that
	// value, ignoring case (as the search filters do); "" keeps all.
	Kind, Product, Environment string
}

// exportLine is a record as an import line, updatedAt included, so that
// importing an export changes nothing.
type exportLine struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Product     string   `json:"product,omitempty"`
	Environment string   `json:"environment,omitempty"`
	Title       string   `json:"title"`
	Body        string   `json:"body"`
	Tags        []string `json:"tags,omitempty"`
	URL         string   `json:"url,omitempty"`
	UpdatedAt   string   `json:"updatedAt"`
}

// matches reports whether r has the values o asks for.
func (o ExportOptions) matches(r *Record) bool {
	for _, f := range []struct{ want, got string }{{o.Kind, r.Kind}, {o.Product, r.Product}, {o.Environment, r.Environment}} {
		if f.want != "" && !strings.EqualFold(f.want, f.got) {
			return false
		}
	}
	return true
}

// Export writes the records o selects to w as JSON Lines, in id order,
// one record per line in the import format with its updatedAt: importing
// the output into any kfa gives the same records, and exporting them again
// gives the same bytes. It reads the records a page at a time, so a
// record written meanwhile may or may not be in the output. It returns the
// number of records written.
func (s *Service) Export(ctx context.Context, w io.Writer, o ExportOptions) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n, after := 0, ""
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		p, err := s.store.ListRecords(ctx, after, MaxPageSize)
		if err != nil {
			return n, fmt.Errorf("export: list records after %q: %w", after, err)
		}
		for i := range p.Records {
			r := &p.Records[i]
			if !o.matches(r) {
				continue
			}
			if err := enc.Encode(exportLine{
				ID: r.ID, Kind: r.Kind, Product: r.Product, Environment: r.Environment, Title: r.Title,
				Body: r.Body, Tags: r.Tags, URL: r.URL, UpdatedAt: FormatTime(r.UpdatedAt),
			}); err != nil {
				return n, fmt.Errorf("export: write record %s: %w", r.ID, err)
			}
			n++
		}
		if p.Next == "" {
			return n, bw.Flush()
		}
		after = p.Next
	}
}

// MaxDeleteBatch is the most ids one DeleteMany takes.
const MaxDeleteBatch = 1000

// DeleteResult is what DeleteMany did.
type DeleteResult struct {
	Deleted  []string `json:"deleted"`
	NotFound []string `json:"notFound"` // no such record (or not a record id at all)
}

// DeleteMany removes the records ids in one transaction, each delete on
// the feed, and names the ids no record has. At most MaxDeleteBatch ids;
// repeated ids count once.
func (s *Service) DeleteMany(ctx context.Context, ids []string) (DeleteResult, error) {
	res := DeleteResult{Deleted: []string{}, NotFound: []string{}}
	if len(ids) > MaxDeleteBatch {
		return res, input.Errorf("ids", "%d ids, at most %d at a time", len(ids), MaxDeleteBatch)
	}
	seen := make(map[string]bool, len(ids))
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if ValidateID(id) != nil {
			res.NotFound = append(res.NotFound, id)
			continue
		}
		valid = append(valid, id)
	}
	if len(valid) == 0 {
		return res, nil
	}
	deleted, missing, err := s.store.DeleteRecords(ctx, valid, s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return res, fmt.Errorf("delete %d records: %w", len(valid), err)
	}
	res.Deleted = append(res.Deleted, deleted...)
	// Missing ids in the order given, the malformed ones among them.
	gone := make(map[string]bool, len(res.NotFound)+len(missing))
	for _, id := range append(res.NotFound, missing...) {
		gone[id] = true
	}
	res.NotFound = res.NotFound[:0]
	for _, id := range ids {
		if gone[id] {
			res.NotFound = append(res.NotFound, id)
			delete(gone, id)
		}
	}
	return res, nil
}
