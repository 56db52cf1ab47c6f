package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kfaProc is a running `kfa serve` subprocess.
type kfaProc struct {
	cmd       *exec.Cmd
	bin       string // the kfa binary it runs
	url       string
	pprofAddr string
	dataDir   string
	startup   time.Duration // exec to the first /readyz 200
	log       *ring         // the server's stdout and stderr (the access log)
	done      chan struct{}
}

// buildKFA builds ./cmd/kfa into dir, unless a binary was given.
func buildKFA(given, dir string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	out := filepath.Join(dir, "kfa")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/kfa")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kfa (run kfa-bench from the repository root, or pass --kfa): %w", err)
	}
	return out, nil
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startKFA runs `kfa serve` on dataDir with every per-agent limit lifted
// and waits for /readyz to answer 200. The time from exec to that answer is
// the startup time.
func (b *bench) startKFA(ctx context.Context, dataDir string, extra ...string) (*kfaProc, error) {
	return b.startKFABin(ctx, b.kfaBin, dataDir, extra...)
}

// startKFABin is startKFA with the kfa binary bin (the baseline build's,
// for one).
func (b *bench) startKFABin(ctx context.Context, bin, dataDir string, extra ...string) (*kfaProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"serve",
		"--addr", addr, "--data", dataDir,
		"--ask-rate", "0", "--max-open-tasks", "0", "--search-rate", "0", "--auth-fail-rate", "0", "--request-rate", "0",
		"--max-streams-per-agent", "0",
		"--batch-delay", b.batchDelay.String(),
	}
	var pprofAddr string
	if b.profileDir != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--pprof-addr", pprofAddr)
	}
	args = append(args, extra...)
	// The server logs every request to stderr. Like a supervisor, the bench
	// reads that pipe (keeping the end for error messages): the log costs
	// the server what it costs in production, and its writes do not share
	// the data directory's disk.
	log := &ring{max: 64 << 10}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = childAttr()
	// The reply limits by environment, which a kfa without them (measured
	// with --kfa) ignores.
	cmd.Env = append(os.Environ(), "KFA_REPLY_RATE=0", "KFA_MAX_REPLIES=0")
	cmd.Stdout, cmd.Stderr = log, log
	p := &kfaProc{cmd: cmd, bin: bin, url: "http://" + addr, pprofAddr: pprofAddr, dataDir: dataDir, log: log, done: make(chan struct{})}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := start.Add(60 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("kfa serve exited during startup: %s", log.tail(2000))
		default:
		}
		resp, err := hc.Get(p.url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.startup = time.Since(start)
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("kfa serve did not become ready within 60s: %s", log.tail(2000))
		}
		time.Sleep(time.Millisecond)
	}
}

// stop sends SIGTERM and waits for the server to drain and close its store.
func (p *kfaProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Memory is what /proc says of the server process.
type Memory struct {
	RSSMiB   float64 `json:"rssMiB"`   // VmRSS: everything resident, the mapped file included
	AnonMiB  float64 `json:"anonMiB"`  // RssAnon: the Go heap, stacks and runtime
	FileMiB  float64 `json:"fileMiB"`  // RssFile: resident pages of the mmapped bbolt file (and the binary)
	VmHWMMiB float64 `json:"vmHWMMiB"` // peak RSS
}

// cpuTime is the CPU time the server has used so far (user and system),
// from /proc (0 where there is none). Its resolution is a clock tick.
func (p *kfaProc) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime and stime the 12th and 13th.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticksPerSecond
}

// memory reads /proc/PID/status.
func (p *kfaProc) memory() (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSSMiB = kb / 1024
		case "RssAnon":
			m.AnonMiB = kb / 1024
		case "RssFile":
			m.FileMiB = kb / 1024
		case "VmHWM":
			m.VmHWMMiB = kb / 1024
		}
	}
	return m, sc.Err()
}

// profile records a CPU profile of the server for d into file.
func (p *kfaProc) profile(d time.Duration, file string) error {
	hc := &http.Client{Timeout: d + 30*time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprofAddr, max(1, int(d.Round(time.Second)/time.Second))))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: HTTP %d", resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ring keeps the last max bytes written to it and counts them all.
type ring struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	r.buf = append(r.buf, p...)
	if len(r.buf) > 2*r.max {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.max:]...)
	}
	return len(p), nil
}

// tail returns the last n bytes written.
func (r *ring) tail(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf[max(0, len(r.buf)-n):])
}
