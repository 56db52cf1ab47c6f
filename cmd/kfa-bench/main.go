// Command kfa-bench is kfa's load benchmark. In one run it measures the
// machine's own ceilings (raw fsync, a bare net/http hello-JSON server, a
// bare net/http + bbolt Batch create server, the official a2a-go v2 SDK's
// server in memory) and then a real `kfa serve` subprocess under the same
// in-process load generator: durable asks, GetTask, ListTasks, search,
// replies, completion latencies, fan-out, an import of generated records
// (wall time, peak RSS), with --curve asks and GetTask at 1 to 256
// clients, and reads, startup, memory and file size over bulk-preloaded
// databases. It reports each kfa number as a ratio to the ceiling measured
// in the same run, and judges the targets of docs/performance.md.
//
// Everything is on loopback and bounded in time and count. `make bench`
// runs it; --quick finishes in a few minutes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// bench holds the settings of one run.
type bench struct {
	quick      bool
	dir        string // work directory: data directories, logs, the kfa binary
	kfaBin     string
	records    string // JSON Lines of knowledge records for search, "" for none
	readers    int    // workers of read phases
	writers    int    // workers of write phases
	agents     int
	warm       time.Duration // before each round, not counted
	round      time.Duration // measured time of one round
	nRounds    int           // rounds of each throughput phase
	fsyncTime  time.Duration
	sizeRound  time.Duration // measured time of one round of one read at one preloaded size
	batchDelay time.Duration
	iterations int // one-at-a-time reply iterations
	fanoutReps int
	sizes      []int
	profileDir string
	preload    bool // measure the preloaded sizes
	imports    int  // records in the import phase; 0 skips it
	curve      bool // the cost curves of asks and GetTask
	verbose    bool
	store      string // a PostgreSQL URL: also run the load phases on it (one and two processes), "" for bbolt only
	// baselines are the commits whose kfa the CPU per ask is compared
	// with (none: not compared); baselineBins their binaries, when given.
	baselines    []string
	baselineBins []string
	storePool    int // kfa serve --store-pool-size on PostgreSQL; 0 leaves kfa's default
}

func (b *bench) logf(format string, args ...any) {
	if b.verbose {
		fmt.Fprintf(os.Stderr, "kfa-bench: "+format+"\n", args...)
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == ceilingCmd {
		if err := ceilingServer(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "kfa-bench ceiling server:", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	os.Exit(runMain(ctx, os.Args[1:]))
}

func runMain(ctx context.Context, args []string) int {
	var (
		b        bench
		jsonPath string
		keep     bool
		large    int
		round    time.Duration
	)
	fs := flag.NewFlagSet("kfa-bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: kfa-bench [--quick] [--json FILE] [--kfa BIN] [flags]\n\n"+
			"Measures this machine's ceilings and kfa serve against them, in one run, over loopback.\n"+
			"Run it from the repository root (it builds ./cmd/kfa unless --kfa is given).\n\nFlags:")
		fs.PrintDefaults()
	}
	fs.BoolVar(&b.quick, "quick", false, "short phases, 10k/100k preloads instead of 10k/1M and a 10k-record import: a few minutes")
	fs.StringVar(&jsonPath, "json", "", "also write the results as JSON to `FILE`")
	fs.StringVar(&b.kfaBin, "kfa", "", "kfa `binary` to measure (default: go build ./cmd/kfa)")
	fs.StringVar(&b.dir, "dir", "", "work `directory` (data, logs); default a new temporary directory, removed after the run")
	fs.BoolVar(&keep, "keep", false, "keep the work directory")
	fs.StringVar(&b.records, "records", "samples/records.jsonl", "knowledge records to import for the search phase (`FILE`, JSON Lines), when this kfa can import them")
	fs.IntVar(&b.readers, "readers", 16, "concurrent workers in read phases (hello-JSON, GetTask, ListTasks, search)")
	fs.IntVar(&b.writers, "writers", 64, "concurrent workers in write phases (Batch create, asks, replies, fan-out joins)")
	fs.IntVar(&b.agents, "agents", 64, "agents making the load")
	fs.DurationVar(&round, "round", 0, "measured time of one round; each throughput is measured over 5 rounds (3 with --quick) alternating with its ceiling's (default 1.5s, 0.5s with --quick)")
	fs.DurationVar(&b.batchDelay, "batch-delay", 2*time.Millisecond, "group-commit window for kfa and the Batch create ceiling")
	fs.IntVar(&large, "large", 0, "tasks in the large preload (default 1000000, 100000 with --quick)")
	fs.StringVar(&b.profileDir, "profile", "", "write CPU profiles of kfa serve for each load phase into `DIR` (uses kfa serve --pprof-addr)")
	fs.IntVar(&b.imports, "import", -1, "records in the import phase (`kfa records import` into a running server: wall time and peak server RSS); 0 skips it (default 100000, 10000 with --quick)")
	fs.BoolVar(&b.curve, "curve", false, "also run asks and GetTask at 1, 4, 16, 64 and 256 concurrent clients (throughput, p50, p99)")
	fs.BoolVar(&b.preload, "preload", true, "measure the bulk-loaded sizes too (the loader is this build's store code: the kfa binary must read its files)")
	fs.IntVar(&b.storePool, "store-pool-size", 0, "with --store: PostgreSQL connections per kfa process (kfa serve --store-pool-size; 0: kfa's default)")
	fs.BoolVar(&b.verbose, "v", true, "log progress to stderr")
	var baselines, baselineBins string
	fs.StringVar(&baselines, "baseline", strings.Join(defaultBaselines, ","), "measure the server CPU per ask against the kfa of these `commits` too (comma-separated), each built from this clone's git history (default: main when issue 24 began, and when issue 32 began); \"\" skips it")
	fs.StringVar(&baselineBins, "baseline-kfa", "", "the baselines' kfa `binaries` (comma-separated, one per --baseline commit, in order), instead of building them")
	fs.StringVar(&b.store, "store", "", "also run the load phases (asks, GetTask, ListTasks, search, replies) on kfa with this PostgreSQL database (`URL` postgres://...; the role makes and drops a database per setup), with one and with two processes, beside bbolt")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "kfa-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	b.baselines, b.baselineBins = splitList(baselines), splitList(baselineBins)
	if len(b.baselineBins) > 0 && len(b.baselineBins) != len(b.baselines) {
		fmt.Fprintf(os.Stderr, "kfa-bench: --baseline-kfa names %d binaries for %d --baseline commits; give one per commit, in order\n",
			len(b.baselineBins), len(b.baselines))
		return 2
	}
	if b.store == "" {
		var from string
		if b.store, from = storeFromEnv(os.Getenv); from != "" && b.verbose {
			fmt.Fprintf(os.Stderr, "kfa-bench: PostgreSQL phases on the server %s names\n", from)
		}
	}
	if b.store != "" {
		if err := checkStoreURL(b.store); err != nil {
			fmt.Fprintln(os.Stderr, "kfa-bench:", err)
			return 2
		}
	}
	b.warm, b.round, b.nRounds, b.fsyncTime, b.sizeRound = 250*time.Millisecond, 1500*time.Millisecond, 5, 2*time.Second, 400*time.Millisecond
	b.iterations, b.fanoutReps = 200, 15
	b.sizes = []int{10_000, 1_000_000}
	if b.quick {
		b.warm, b.round, b.nRounds, b.fsyncTime, b.sizeRound = 150*time.Millisecond, 500*time.Millisecond, 3, time.Second, 250*time.Millisecond
		b.iterations, b.fanoutReps = 50, 5
		b.sizes = []int{10_000, 100_000}
	}
	if b.imports < 0 {
		b.imports = 100_000
		if b.quick {
			b.imports = 10_000
		}
	}
	if round > 0 {
		b.round = round
	}
	if large > 0 {
		b.sizes[1] = large
	}
	if b.records != "" {
		if _, err := os.Stat(b.records); err != nil {
			b.records = ""
		}
	}
	if err := b.runAll(ctx, jsonPath, keep); err != nil {
		fmt.Fprintln(os.Stderr, "kfa-bench:", err)
		return 1
	}
	return 0
}

func (b *bench) runAll(ctx context.Context, jsonPath string, keep bool) error {
	started := time.Now()
	if b.dir == "" {
		d, err := os.MkdirTemp("", "kfa-bench-")
		if err != nil {
			return err
		}
		b.dir = d
		if !keep {
			defer os.RemoveAll(d)
		}
	} else if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return err
	}
	if b.profileDir != "" {
		if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
			return err
		}
	}
	var err error
	if b.kfaBin, err = buildKFA(b.kfaBin, b.dir); err != nil {
		return err
	}
	bls, bins, err := b.prepareBaselines(ctx)
	if err != nil {
		return err
	}
	res := Results{
		Quick: b.quick, Started: started, Machine: describeMachine(b.dir, b.kfaBin),
		Settings: Settings{Readers: b.readers, Writers: b.writers, Agents: b.agents, Rounds: b.nRounds, RoundSeconds: b.round.Seconds(),
			WarmSeconds: b.warm.Seconds(), BatchDelay: b.batchDelay.String(), Iterations: b.iterations, FanoutReps: b.fanoutReps},
	}
	if res.Ceilings, res.KFA, err = b.measureLoad(ctx); err != nil {
		return err
	}
	if len(bins) > 0 {
		if bls, err = b.measureBaselines(ctx, bls, bins); err != nil {
			return err
		}
	}
	res.Baselines = bls
	grpcRes, err := b.measureGRPC(ctx)
	if err != nil {
		return err
	}
	res.GRPC = &grpcRes
	if b.store != "" {
		st, err := b.measureStores(ctx)
		if err != nil {
			return err
		}
		res.Stores = &st
		b.logf("failover: two processes on a primary and its synchronous standby, the primary stopped under asks and the standby promoted")
		fb := b.measureFailover(ctx)
		res.Failover = &fb
	}
	b.logf("push notifications: a reply completing 1,000 tasks with a config each")
	if res.Push, err = b.pushDelivery(ctx); err != nil {
		return err
	}
	if b.imports > 0 {
		b.logf("import: %d generated records with kfa records import into a running server", b.imports)
		if res.Import, err = b.importRSS(ctx, b.imports); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	if b.preload {
		if res.Sizes, err = b.runSizes(ctx); err != nil {
			return err
		}
	}
	res.Seconds = time.Since(started).Seconds()
	res.judge()
	res.print(os.Stdout)
	printRender(os.Stdout, measureRender())
	if jsonPath != "" {
		out, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	if keep {
		fmt.Fprintf(os.Stderr, "kfa-bench: work directory kept at %s\n", b.dir)
	}
	return nil
}

// prepareBaselines builds (or takes) the baselines' binaries. It returns
// every baseline, those measurable first, in order, with the binaries
// of those; the others say why they are not.
func (b *bench) prepareBaselines(ctx context.Context) ([]Baseline, []string, error) {
	var ok, skipped []Baseline
	var bins []string
	for i, commit := range b.baselines {
		bl := Baseline{Commit: commit}
		var bin string
		if len(b.baselineBins) > 0 {
			abs, err := filepath.Abs(b.baselineBins[i])
			if err != nil {
				return nil, nil, err
			}
			bin = abs
		} else {
			b.logf("baseline: building kfa of commit %s from the git history", shortCommit(commit))
			var err error
			if bin, bl.Skipped, err = buildBaseline(ctx, commit, b.dir); err != nil {
				return nil, nil, err
			}
			if bl.Skipped != "" {
				b.logf("baseline: %s", bl.Skipped)
				skipped = append(skipped, bl)
				continue
			}
		}
		ok, bins = append(ok, bl), append(bins, bin)
	}
	return append(ok, skipped...), bins, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func execCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, name, args...)
}
