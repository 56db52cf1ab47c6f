package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The ceilings: what this machine does with nothing of kfa in the way.
// The two servers run as subprocesses of this binary (re-executed with the
// hidden ceilingCmd argument), so they, like kfa serve, are processes of
// their own that the generator reaches over loopback.

// ceilingCmd is the hidden first argument that turns kfa-bench into a
// ceiling server.
const ceilingCmd = "__ceiling-server"

// Fsync is the raw fsync rate of the data directory.
type Fsync struct {
	PerSec float64 `json:"perSec"`
	Latency
}

// measureFsync writes 128 bytes at offset 0 of a file in dir and fsyncs
// it, in a loop, for dur.
func measureFsync(dir string, dur time.Duration) (Fsync, error) {
	f, err := os.CreateTemp(dir, "fsync-*")
	if err != nil {
		return Fsync{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 128)
	var lat []time.Duration
	start := time.Now()
	for time.Since(start) < dur {
		t0 := time.Now()
		binary.BigEndian.PutUint64(buf, uint64(t0.UnixNano()))
		if _, err := f.WriteAt(buf, 0); err != nil {
			return Fsync{}, err
		}
		if err := f.Sync(); err != nil {
			return Fsync{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	el := time.Since(start)
	return Fsync{PerSec: float64(len(lat)) / el.Seconds(), Latency: summarize(lat)}, nil
}

// ceilingServer runs in the subprocess: "hello" answers GET /hello with a
// small JSON object; "create" answers POST /create by storing the request
// body under a new 16-byte key in one bbolt Batch (group commit, fsync
// before the answer) and answering the key as JSON, and GET /stats with
// its page writes and creates so far.
func ceilingServer(args []string) error {
	fs := flag.NewFlagSet(ceilingCmd, flag.ContinueOnError)
	kind := fs.String("kind", "hello", "hello, create or sdk")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	data := fs.String("data", "", "data directory (create)")
	delay := fs.Duration("batch-delay", 2*time.Millisecond, "bbolt MaxBatchDelay (create)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mux := http.NewServeMux()
	switch *kind {
	case "hello":
		mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
			b, _ := json.Marshal(struct {
				Message string `json:"message"`
				Time    string `json:"time"`
			}{"hello", time.Now().UTC().Format(time.RFC3339Nano)})
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		})
	case "create":
		db, err := bolt.Open(filepath.Join(*data, "ceiling.db"), 0o600, &bolt.Options{
			Timeout: time.Second, FreelistType: bolt.FreelistMapType,
		})
		if err != nil {
			return err
		}
		defer db.Close()
		db.MaxBatchDelay = *delay
		bucket := []byte("records")
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
			return err
		}
		var creates atomic.Int64
		mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
			st := db.Stats()
			b, _ := json.Marshal(ceilingStats{PageWrites: st.TxStats.GetWrite(), Creates: creates.Load()})
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		})
		mux.HandleFunc("POST /create", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 256<<10))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var key [16]byte
			binary.BigEndian.PutUint64(key[:8], uint64(time.Now().UnixNano()))
			_, _ = rand.Read(key[8:])
			if err := db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key[:], body) }); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			creates.Add(1)
			b, _ := json.Marshal(struct {
				ID string `json:"id"`
			}{fmt.Sprintf("%x", key)})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(b)
		})
	case "sdk":
		mux.Handle("/", sdkHandler())
	default:
		return fmt.Errorf("unknown ceiling server kind %q", *kind)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		// The parent closes our stdin to stop us.
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// child is a ceiling server subprocess.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

// startCeiling starts a ceiling server of the given kind and waits for its
// address.
func startCeiling(kind, dataDir string, batchDelay time.Duration) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, ceilingCmd, "-kind", kind, "-data", dataDir, "-batch-delay", batchDelay.String())
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("ceiling server %s: %w", kind, err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("ceiling server %s said %q", kind, line)
	}
	return &child{cmd: cmd, stdin: stdin, addr: addr}, nil
}

func (c *child) stop() {
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// Ceilings are the machine's own limits, measured in this run.
type Ceilings struct {
	Fsync  Fsync      `json:"fsync"`
	Hello  Throughput `json:"helloJSON"`
	Create Throughput `json:"batchCreate"`
	// SDKSend and SDKGet are the official a2a-go v2 SDK's server, in
	// memory: message:send answering a working task, and GetTask.
	SDKSend Throughput `json:"sdkSend"`
	SDKGet  Throughput `json:"sdkGet"`
}

// ceilingServers are the two ceiling subprocesses, running side by side
// with kfa serve so that their rounds can alternate with kfa's.
type ceilingServers struct {
	hello, create, sdk *child
}

func (b *bench) startCeilings() (*ceilingServers, error) {
	hello, err := startCeiling("hello", b.dir, b.batchDelay)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(b.dir, "ceiling")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		hello.stop()
		return nil, err
	}
	create, err := startCeiling("create", dir, b.batchDelay)
	if err != nil {
		hello.stop()
		return nil, err
	}
	sdk, err := startCeiling("sdk", b.dir, b.batchDelay)
	if err != nil {
		hello.stop()
		create.stop()
		return nil, err
	}
	return &ceilingServers{hello: hello, create: create, sdk: sdk}, nil
}

// stop stops the servers; a second call does nothing.
func (c *ceilingServers) stop() {
	for _, s := range []**child{&c.hello, &c.create, &c.sdk} {
		if *s != nil {
			(*s).stop()
			*s = nil
		}
	}
}

// helloPhase and createPhase drive the ceiling servers.
func (c *ceilingServers) helloPhase(hc *http.Client, workers int) *phase {
	url := "http://" + c.hello.addr + "/hello"
	return &phase{name: "hello", workers: workers, fn: func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodGet, url: url})
	}}
}

func (c *ceilingServers) createPhase(hc *http.Client, workers int) *phase {
	url := "http://" + c.create.addr + "/create"
	return &phase{name: "create", workers: workers, fn: func(ctx context.Context, w *worker, i int) error {
		return do(ctx, hc, w, call{method: http.MethodPost, url: url, body: askBody(w.id, i, "", "ceiling"), want: http.StatusCreated})
	}}
}
