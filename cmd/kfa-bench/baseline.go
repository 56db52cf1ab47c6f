package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kfa-project/kfa/client"
)

// The CPU an honest ask costs the server, against "today": the kfa of an
// earlier commit, built from this clone's own history, under the same
// load in alternating rounds. Each issue that set a CPU target names its
// own "today": every baseline runs beside this build in the same rounds.

// baselineCommit is main when issue 24 began: the "today" its CPU target
// halves. engine2Commit is main when issue 32 began.
const (
	baselineCommit = "dcd64102706b19334e531ca7f9bf233f4926cf3d"
	engine2Commit  = "de7e1022caf7eb56e893ef8cf19aeb34e70946a5"
)

// defaultBaselines are the commits measured beside this build by default.
var defaultBaselines = []string{baselineCommit, engine2Commit}

// maxCPURatio is issue 24's bound on this build's server CPU per honest
// ask, as a share of the baseline's.
const maxCPURatio = 0.5

// Baseline is the server CPU per honest ask of this build and of the
// baseline build, measured in one run.
type Baseline struct {
	Commit string `json:"commit"`
	// Skipped says why it was not measured, when it was not.
	Skipped string `json:"skipped,omitempty"`
	// Today is the baseline build, Now this one.
	Today CPURun `json:"today"`
	Now   CPURun `json:"now"`
}

// CPURun is one server's asks and the CPU they cost it.
type CPURun struct {
	Asks Throughput `json:"asks"`
	// CPUPerAskUs is the server's CPU time (user and system) from the
	// start of the first round to the end of the work the last one left
	// (the search follower, index merges), per acknowledged ask, in
	// microseconds. RoundCPUPerAskUs counts the server's own rounds only.
	CPUPerAskUs      float64 `json:"cpuPerAskUs"`
	RoundCPUPerAskUs float64 `json:"roundCpuPerAskUs"`
	// IdleCPUPerSec is what the server used idle before the rounds, CPU
	// seconds per second: the share of the figures above that is no ask's.
	IdleCPUPerSec float64 `json:"idleCpuPerSec"`
}

// shortCommit is commit's abbreviation, or what stands for it when the
// baseline binary was given.
func shortCommit(commit string) string {
	if commit == "" {
		return "(--baseline-kfa)"
	}
	return commit[:min(7, len(commit))]
}

// baselineOf is the baseline of commit in bls, or one that says it was
// not measured in this run.
func baselineOf(bls []Baseline, commit string) Baseline {
	for _, bl := range bls {
		if bl.Commit == commit {
			return bl
		}
	}
	return Baseline{Commit: commit, Skipped: "not measured: this run's --baseline does not name commit " + shortCommit(commit)}
}

// Ratio is this build's CPU per ask as a share of the baseline's.
func (bl Baseline) Ratio() float64 { return ratio(bl.Now.CPUPerAskUs, bl.Today.CPUPerAskUs) }

// buildBaseline extracts commit from the git history of the repository in
// the current directory into dir and builds its kfa there. skipped, when
// not empty, says why there is no baseline: the history lacks the commit,
// or there is no git. An error is a build that failed.
func buildBaseline(ctx context.Context, commit, dir string) (bin, skipped string, err error) {
	short := shortCommit(commit)
	if _, err := exec.LookPath("git"); err != nil {
		return "", "no git on this machine to read commit " + short + " from", nil
	}
	if out, err := exec.CommandContext(ctx, "git", "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		return "", fmt.Sprintf("commit %s is not in this clone's git history (%s; a shallow clone? git fetch --unshallow, or pass --baseline-kfa BIN)",
			short, strings.TrimSpace(string(out))), nil
	}
	src := filepath.Join(dir, "baseline-src-"+short)
	if err := gitArchive(ctx, commit, src); err != nil {
		return "", "", fmt.Errorf("git archive %s: %w", short, err)
	}
	bin = filepath.Join(dir, "kfa-"+short)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/kfa")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("go build of commit %s's ./cmd/kfa: %w", short, err)
	}
	return bin, "", nil
}

// gitArchive writes the tree of commit into dir: all of it, from
// wherever in the work tree it is run (git archive on its own takes the
// current subdirectory only).
func gitArchive(ctx context.Context, commit, dir string) error {
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("git rev-parse --show-toplevel: %w", err)
	}
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", commit)
	cmd.Dir = strings.TrimSpace(string(top))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	xerr := untar(out, dir)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return xerr
}

// untar writes the directories, files and symbolic links of the tar
// stream r under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q is outside the tree", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o777)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// measureBaselines runs honest asks (the asks phase's) against a fresh
// kfa serve of each baseline binary (bls[i] is bins[i]'s, its Skipped
// empty) and one of this build, in alternating rounds, and reads each
// server's CPU time. Every baseline gets this build's figures of the same
// rounds as its Now.
func (b *bench) measureBaselines(ctx context.Context, bls []Baseline, bins []string) ([]Baseline, error) {
	n := len(bins) + 1 // the baselines, then this build
	procs := make([]*kfaProc, n)
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.stop()
			}
		}
	}()
	names := make([]string, n)
	for i := range bins {
		names[i] = "baseline-" + shortCommit(bls[i].Commit)
	}
	names[n-1] = "baseline-now"
	agents := make([][]agent, n)
	for i, exe := range append(append([]string{}, bins...), b.kfaBin) {
		p, err := b.startKFABin(ctx, exe, filepath.Join(b.dir, fmt.Sprintf("baseline-%d", i)))
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		procs[i] = p
		if err := b.importRecords(ctx, p); err != nil {
			b.logf("baseline: records import skipped: %v", err)
		}
		adm := client.NewUnix(filepath.Join(p.dataDir, "kfa.sock"))
		for j := range b.agents {
			a, err := adm.CreateAgent(ctx, fmt.Sprintf("bench-%03d", j), []string{"read", "post"})
			if err != nil {
				return nil, fmt.Errorf("baseline: create agent: %w", err)
			}
			agents[i] = append(agents[i], agent{id: a.ID, token: a.Token})
		}
	}
	// What each uses idle, over the same second.
	idle := make([]time.Duration, n)
	for i, p := range procs {
		idle[i] = p.cpuTime()
	}
	const idleFor = time.Second
	time.Sleep(idleFor)
	for i, p := range procs {
		idle[i] = p.cpuTime() - idle[i]
	}

	hc := httpClient(b.writers + 8)
	defer hc.CloseIdleConnections()
	phases := make([]*phase, n)
	for i, p := range procs {
		sendURL, ags := p.url+"/a2a/v1/message:send", agents[i]
		phases[i] = &phase{name: names[i], workers: b.writers, cpu: p.cpuTime, profile: b.profiler(p, names[i]),
			fn: func(ctx context.Context, w *worker, i int) error {
				return do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: ags[w.id%len(ags)].token,
					body: askBody(w.id, i, "", "cpu"), a2a: true})
			}}
	}
	c0 := make([]time.Duration, n)
	for i, p := range procs {
		c0[i] = p.cpuTime()
	}
	var labels []string
	for _, bl := range bls[:len(bins)] {
		labels = append(labels, shortCommit(bl.Commit))
	}
	b.logf("baseline: %d rounds of honest asks on kfa %s and on this build, alternating, %d workers",
		b.nRounds, strings.Join(labels, ", "), b.writers)
	b.rounds(ctx, phases...)
	runs := make([]CPURun, n)
	for i, p := range procs {
		used := settle(ctx, p) - c0[i]
		run := CPURun{Asks: phases[i].total.throughput(b.writers), IdleCPUPerSec: idle[i].Seconds() / idleFor.Seconds()}
		if n := float64(run.Asks.Ops); n > 0 {
			run.CPUPerAskUs = used.Seconds() / n * 1e6
			run.RoundCPUPerAskUs = phases[i].cpuUsed.Seconds() / n * 1e6
		}
		runs[i] = run
	}
	out := append([]Baseline{}, bls...)
	for i := range bins {
		out[i].Today, out[i].Now = runs[i], runs[n-1]
		if runs[i].Asks.Ops == 0 || runs[n-1].Asks.Ops == 0 {
			return out, fmt.Errorf("baseline: no ask succeeded (kfa %s: %s; this build: %s)",
				shortCommit(out[i].Commit), runs[i].Asks.FirstError, runs[n-1].Asks.FirstError)
		}
	}
	return out, nil
}

// settle waits until p has finished the work its requests left behind
// (its CPU time grows by at most a clock tick in 250 ms; at most 15 s) and
// returns its CPU time then.
func settle(ctx context.Context, p *kfaProc) time.Duration {
	const tick = 10 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	last := p.cpuTime()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
		now := p.cpuTime()
		if now-last <= tick {
			return now
		}
		last = now
	}
	return last
}
