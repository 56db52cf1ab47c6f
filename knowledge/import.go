package knowledge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kfa-project/kfa/internal/english"
)

// Import defaults.
const (
	DefaultBatchSize   = 1000    // records per transaction
	DefaultBatchBytes  = 4 << 20 // record bytes (Record.Size) per transaction
	DefaultMaxReported = 1000    // line errors listed in a summary
)

// ImportOptions tune Import. The zero value imports leniently in batches
// of DefaultBatchSize.
type ImportOptions struct {
	// Strict writes nothing when any line is bad.
	Strict bool
	// BatchSize is the number of records written per transaction.
	BatchSize int
	// BatchBytes bounds the records' bytes (Record.Size) written per
	// transaction, so a file of large records holds no more in memory
	// than one of small ones. A batch holds at least one record.
	BatchBytes int
	// MaxReported bounds the line errors listed in the summary; the rest
	// are only counted.
	MaxReported int
	// TempDir holds the spool of a strict import; "" is os.TempDir().
	TempDir string
}

// ImportSummary is what an import did.
type ImportSummary struct {
	Lines     int  `json:"lines"` // lines holding a record or an error; blank lines are not counted
	Added     int  `json:"added"`
	Updated   int  `json:"updated"`
	Unchanged int  `json:"unchanged"`
	Rejected  int  `json:"rejected"`
	Strict    bool `json:"strict"`
	// Written is false when a strict import refused the file.
	Written bool `json:"written"`
	// Errors lists the rejected lines, in order, up to MaxReported.
	Errors []LineError `json:"errors"`
	// Unreported counts rejected lines beyond MaxReported.
	Unreported int `json:"unreported,omitempty"`
}

func (s *ImportSummary) count(out []Outcome) {
	for _, o := range out {
		switch o {
		case Added:
			s.Added++
		case Updated:
			s.Updated++
		case Unchanged:
			s.Unchanged++
		}
	}
}

func (s *ImportSummary) reject(e *LineError, max int) {
	s.Rejected++
	if len(s.Errors) < max {
		s.Errors = append(s.Errors, *e)
	} else {
		s.Unreported++
	}
}

// Import reads JSON Lines from r and upserts each valid record by id, in
// transactions of at most BatchSize records and BatchBytes bytes: the
// memory it holds is bounded whatever the size of r. Bad lines are reported with their
// numbers and skipped; with Strict, any bad line means nothing is written.
// Blank lines are skipped.
//
// A failure part-way (the stream breaks, the context ends, the store
// fails) keeps the batches already committed and returns the summary so
// far with the error: importing the same file again finishes the job, the
// committed records counting as unchanged.
func (s *Service) Import(ctx context.Context, r io.Reader, o ImportOptions) (ImportSummary, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.MaxReported <= 0 {
		o.MaxReported = DefaultMaxReported
	}
	sum := ImportSummary{Strict: o.Strict, Errors: []LineError{}}
	if o.Strict {
		return s.importStrict(ctx, r, o, sum)
	}
	var batch batcher
	flush := func() error {
		if len(batch.recs) == 0 {
			return nil
		}
		out, err := s.Upsert(ctx, batch.recs)
		if err != nil {
			return err
		}
		sum.count(out)
		sum.Written = true
		batch.reset()
		return nil
	}
	err := readRecords(ctx, r, func(rec Record) error {
		sum.Lines++
		if batch.overflows(rec, o) {
			if err := flush(); err != nil {
				return err
			}
		}
		// A full batch is written at once, not when the next line comes:
		// a stream that pauses has its records committed.
		if batch.add(rec); batch.full(o) {
			return flush()
		}
		return nil
	}, func(e *LineError) {
		sum.Lines++
		sum.reject(e, o.MaxReported)
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return sum, importFailed(sum, err)
	}
	return sum, nil
}

// importStrict validates every line before writing any: valid records are
// spooled to a temporary file, so memory stays flat however large the
// input, and written in batches only when no line was bad.
func (s *Service) importStrict(ctx context.Context, r io.Reader, o ImportOptions, sum ImportSummary) (ImportSummary, error) {
	spool, err := os.CreateTemp(o.TempDir, "kfa-import-*.jsonl")
	if err != nil {
		return sum, fmt.Errorf("import: create spool file: %w", err)
	}
	defer func() {
		_ = spool.Close()
		_ = os.Remove(spool.Name())
	}()
	w := bufio.NewWriter(spool)
	enc := json.NewEncoder(w)
	err = readRecords(ctx, r, func(rec Record) error {
		sum.Lines++
		return enc.Encode(rec)
	}, func(e *LineError) {
		sum.Lines++
		sum.reject(e, o.MaxReported)
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return sum, importFailed(sum, err)
	}
	if sum.Rejected > 0 {
		return sum, nil
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return sum, fmt.Errorf("import: rewind spool file: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReader(spool))
	var batch batcher
	var next *Record // read, but did not fit in the last batch
	for {
		batch.reset()
		if next != nil {
			batch.add(*next)
			next = nil
		}
		for {
			var rec Record
			if err := dec.Decode(&rec); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return sum, fmt.Errorf("import: read spool file: %w", err)
			}
			if batch.overflows(rec, o) {
				next = &rec
				break
			}
			if batch.add(rec); batch.full(o) {
				break
			}
		}
		if len(batch.recs) == 0 {
			return sum, nil
		}
		if err := ctx.Err(); err != nil {
			return sum, importFailed(sum, err)
		}
		out, err := s.Upsert(ctx, batch.recs)
		if err != nil {
			return sum, importFailed(sum, err)
		}
		sum.count(out)
		sum.Written = true
	}
}

// batcher gathers the records of one import transaction.
type batcher struct {
	recs  []Record
	bytes int
}

// overflows reports whether rec would take the batch past o's bytes; an
// empty batch always takes it.
func (b *batcher) overflows(rec Record, o ImportOptions) bool {
	return len(b.recs) > 0 && b.bytes+rec.Size() > o.BatchBytes
}

// full reports whether the batch has reached o's bounds.
func (b *batcher) full(o ImportOptions) bool {
	return len(b.recs) >= o.BatchSize || b.bytes >= o.BatchBytes
}

func (b *batcher) add(rec Record) {
	b.recs = append(b.recs, rec)
	b.bytes += rec.Size()
}

// reset empties the batch, letting go of its records.
func (b *batcher) reset() {
	clear(b.recs)
	b.recs, b.bytes = b.recs[:0], 0
}

// readRecords parses r line by line, calling good for each valid record
// and bad for each rejected line. An error from good, from reading, or the
// end of ctx stops it.
func readRecords(ctx context.Context, r io.Reader, good func(Record) error, bad func(*LineError)) error {
	lr := newLineReader(r, MaxLineBytes)
	for {
		line, n, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading line %d: %w", n+1, err)
		}
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if tooLong {
			bad(&LineError{Line: n, Message: fmt.Sprintf("line is longer than %d bytes", MaxLineBytes)})
			continue
		}
		if isBlank(line) {
			continue
		}
		rec, err := ParseLine(n, line)
		if err != nil {
			var le *LineError
			if errors.As(err, &le) {
				bad(le)
				continue
			}
			return err
		}
		if err := good(rec); err != nil {
			return err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// importFailed wraps err with how far the import got.
func importFailed(sum ImportSummary, err error) error {
	committed := sum.Added + sum.Updated + sum.Unchanged
	return fmt.Errorf("import stopped after %s (%s committed and kept; importing the file again skips them as unchanged): %w",
		english.Count(sum.Lines, "line", "lines"), english.Count(committed, "record", "records"), err)
}
