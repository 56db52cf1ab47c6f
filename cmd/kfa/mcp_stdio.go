package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// maxDrain bounds how long kfa mcp waits, once stdin has ended, for the
// answers to the requests it already read.
const maxDrain = time.Minute

// stdio is kfa mcp's end of the pipe. The MCP SDK ends a session as soon
// as its input ends, dropping calls still running; stdio holds the end of
// input back until every request read has been answered, so that
// `printf '...' | kfa mcp` prints its answers.
type stdio struct {
	in      *bufio.Reader
	out     io.Writer
	pending []byte // the rest of the line being read

	mu       sync.Mutex
	asked    map[string]bool // ids of requests read and not yet answered
	answered chan struct{}   // signalled on each answer
	partial  []byte          // an answer line not yet written in full
}

func newStdio(in io.Reader, out io.Writer) *stdio {
	return &stdio{in: bufio.NewReader(in), out: out, asked: map[string]bool{}, answered: make(chan struct{}, 1)}
}

// envelope is what stdio reads of a JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// Read hands the SDK the input line by line, noting the requests.
func (s *stdio) Read(p []byte) (int, error) {
	if len(s.pending) == 0 {
		line, err := s.in.ReadBytes('\n')
		switch {
		case len(line) > 0:
			var e envelope
			if json.Unmarshal(line, &e) == nil && e.Method != "" && isID(e.ID) {
				s.mu.Lock()
				s.asked[idKey(e.ID)] = true
				s.mu.Unlock()
			}
			s.pending = line
		case err == io.EOF:
			s.drain()
			return 0, io.EOF
		default:
			return 0, err
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// drain waits until every request read has its answer.
func (s *stdio) drain() {
	deadline := time.After(maxDrain)
	for {
		s.mu.Lock()
		open := len(s.asked)
		s.mu.Unlock()
		if open == 0 {
			return
		}
		select {
		case <-s.answered:
		case <-deadline:
			return
		}
	}
}

// Write passes the SDK's output on, noting the answers.
func (s *stdio) Write(p []byte) (int, error) {
	n, err := s.out.Write(p)
	s.mu.Lock()
	s.partial = append(s.partial, p[:n]...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		var e envelope
		if json.Unmarshal(s.partial[:i], &e) == nil && e.Method == "" && isID(e.ID) {
			delete(s.asked, idKey(e.ID))
		}
		s.partial = s.partial[i+1:]
	}
	s.mu.Unlock()
	select {
	case s.answered <- struct{}{}:
	default:
	}
	return n, err
}

// Close is a no-op: stdin and stdout belong to the process.
func (s *stdio) Close() error { return nil }

// idKey spells an id the same way in a request and in its answer.
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func isID(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}
