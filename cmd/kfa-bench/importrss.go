package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kfa-project/kfa/knowledge/knowledgetest"
)

// ImportBench is `kfa records import` of generated records into a running
// server, through its admin socket: the wall time of the command, and the
// server's memory while it ran.
type ImportBench struct {
	Records int     `json:"records"`
	FileMiB float64 `json:"fileMiB"`
	Seconds float64 `json:"seconds"`
	// PeakRSSMiB is the server's VmHWM after the import: its peak RSS,
	// start included. PeakAnonMiB and PeakFileMiB are the highest RssAnon
	// (heap, stacks) and RssFile (the mapped bbolt file and index
	// segments, the binary) sampled every 100 ms.
	PeakRSSMiB  float64 `json:"peakRSSMiB"`
	PeakAnonMiB float64 `json:"peakAnonMiB"`
	PeakFileMiB float64 `json:"peakFileMiB"`
	StartRSSMiB float64 `json:"startRSSMiB"`
	Skipped     string  `json:"skipped,omitempty"`
}

// importRSS writes n generated records (knowledgetest, the search
// benchmarks' generator) as JSON Lines, starts a fresh kfa serve and
// imports them with `kfa records import`, which returns once they are
// searchable.
func (b *bench) importRSS(ctx context.Context, n int) (ImportBench, error) {
	res := ImportBench{Records: n}
	file := filepath.Join(b.dir, "import.jsonl")
	f, err := os.Create(file)
	if err != nil {
		return res, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = knowledgetest.WriteJSONL(w, 1, n, 0)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", file, err)
	}
	defer os.Remove(file)
	res.FileMiB = fileMiB(file)

	dataDir := filepath.Join(b.dir, "import-data")
	p, err := b.startKFA(ctx, dataDir)
	if err != nil {
		return res, err
	}
	defer func() {
		p.stop()
		_ = os.RemoveAll(dataDir)
	}()
	if m, err := p.memory(); err == nil {
		res.StartRSSMiB = m.VmHWMMiB
	}
	stopSampling := sampleMemory(p)
	t0 := time.Now()
	out, err := execCommand(ctx, b.kfaBin, "records", "import", file, "--data", dataDir).CombinedOutput()
	res.Seconds = time.Since(t0).Seconds()
	peak := stopSampling()
	if err != nil {
		if !bytes.Contains(out, []byte("Imported")) {
			res.Skipped = "not measurable: " + truncate(string(bytes.TrimSpace(out)), 200)
			return res, nil
		}
		return res, fmt.Errorf("kfa records import: %w: %s", err, truncate(string(bytes.TrimSpace(out)), 300))
	}
	res.PeakRSSMiB, res.PeakAnonMiB, res.PeakFileMiB = peak.VmHWMMiB, peak.AnonMiB, peak.FileMiB
	return res, nil
}

// sampleMemory samples p's RssAnon and RssFile every 100 ms until the
// function it returns is called, which returns the highest of each and
// p's VmHWM (its peak RSS) then.
func sampleMemory(p *kfaProc) func() Memory {
	stop := make(chan struct{})
	sampled := make(chan Memory)
	go func() {
		var peak Memory
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := p.memory(); err == nil {
				peak.AnonMiB, peak.FileMiB = max(peak.AnonMiB, m.AnonMiB), max(peak.FileMiB, m.FileMiB)
			}
			select {
			case <-stop:
				if m, err := p.memory(); err == nil {
					peak.VmHWMMiB, peak.RSSMiB = m.VmHWMMiB, m.RSSMiB
				}
				sampled <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() Memory {
		close(stop)
		return <-sampled
	}
}
