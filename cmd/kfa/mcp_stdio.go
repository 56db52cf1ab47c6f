package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kfa-project/kfa/mcpserver"
)

// maxDrain bounds how long kfa mcp waits, once stdin has ended, for the
// answers to the requests it already read.
const maxDrain = time.Minute

// maxLine bounds one line of input: a message longer than this is
// answered with an error and skipped (the SDK would end the session).
const maxLine = 4 << 20

// batchesUntil is the first protocol version without JSON-RPC batches.
const batchesUntil = "2025-06-18"

// metaProtocolVersion is where a request of protocol 2026-07-28 and later
// names its version (there is no initialize).
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

var errLineTooLong = errors.New("line too long")

// stdio is kfa mcp's end of the pipe, between the client and the SDK.
//
// The SDK ends a session at the first line it cannot read, dropping the
// calls still running; stdio answers such a line itself (-32700 for one
// that is not JSON, -32600 or -32602 for one that is not a JSON-RPC
// message the SDK can take) and hands the SDK only the others, so the
// session goes on. It holds the end of input back until every request
// read has been answered, so that `printf '...' | kfa mcp` prints its
// answers. And it adapts each answer to the protocol version the client
// speaks (mcpserver.AdaptResponse).
type stdio struct {
	in      *bufio.Reader
	out     io.Writer
	pending []byte // the rest of the line being handed to the SDK
	eof     bool   // the input has ended

	// outMu orders the writes to out (the SDK's lines and kfa's own
	// answers); mu guards what follows it. Reading never waits for a
	// write: a client that writes its requests before it reads answers
	// does not deadlock kfa mcp.
	outMu    sync.Mutex
	mu       sync.Mutex
	asked    map[string]bool   // ids of requests read and not yet answered
	inits    map[string]bool   // ids of initialize requests not yet answered
	versions map[string]string // protocol versions requests name in _meta
	version  string            // the version initialize negotiated
	answered chan struct{}     // signalled on each answer
	partial  []byte            // output not yet written: a line not yet whole (outMu)
}

func newStdio(in io.Reader, out io.Writer) *stdio {
	return &stdio{
		in: bufio.NewReader(in), out: out,
		asked: map[string]bool{}, inits: map[string]bool{}, versions: map[string]string{},
		answered: make(chan struct{}, 1),
	}
}

// Read hands the SDK the input, one good line at a time.
func (s *stdio) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.eof {
			s.drain()
			return 0, io.EOF
		}
		line, err := s.readLine()
		switch {
		case errors.Is(err, errLineTooLong):
			s.answer(&mcpserver.MessageError{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("a message longer than %d bytes: refused", maxLine)})
			continue
		case err == io.EOF:
			s.eof = true
		case err != nil:
			return 0, err
		}
		s.pending = s.admit(line)
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// readLine reads one line, at most maxLine bytes; the rest of a longer
// line is skipped. At the end of input it returns the last line (which
// may lack its newline) with io.EOF.
func (s *stdio) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.in.ReadSlice('\n')
			}
			if err == io.EOF {
				s.eof = true
			} else if err != nil {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// admit checks one line: the SDK gets it if it can take it, the client
// gets an error answer if not.
func (s *stdio) admit(line []byte) []byte {
	msg := bytes.TrimSpace(line)
	if len(msg) == 0 {
		return nil
	}
	s.mu.Lock()
	batches := s.version != "" && s.version < batchesUntil
	s.mu.Unlock()
	if e := mcpserver.CheckMessage(msg, batches); e != nil {
		s.answer(e)
		return nil
	}
	s.noteRequests(msg)
	return append(msg, '\n')
}

// answer writes kfa's own error answer.
func (s *stdio) answer(e *mcpserver.MessageError) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = s.out.Write(append(e.Response(), '\n'))
}

// envelope is what stdio reads of a JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
	Result struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
}

// messages reads a message or a batch as envelopes. A member of another
// shape than envelope's (params that are an array) leaves the rest read.
func messages(msg []byte) []envelope {
	var te *json.UnmarshalTypeError
	if len(msg) > 0 && msg[0] == '[' {
		var batch []envelope
		if err := json.Unmarshal(msg, &batch); err != nil && !errors.As(err, &te) {
			return nil
		}
		return batch
	}
	var e envelope
	if err := json.Unmarshal(msg, &e); err != nil && !errors.As(err, &te) {
		return nil
	}
	return []envelope{e}
}

// noteRequests records the requests of a message the SDK will answer.
func (s *stdio) noteRequests(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range messages(msg) {
		if e.Method == "" || !isID(e.ID) {
			continue
		}
		key := idKey(e.ID)
		s.asked[key] = true
		if e.Method == "initialize" {
			s.inits[key] = true
		}
		var v string
		if json.Unmarshal(e.Params.Meta[metaProtocolVersion], &v) == nil && v != "" {
			s.versions[key] = v
		}
	}
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

// Write passes the SDK's output on line by line, each adapted to the
// client's protocol version, noting the answers.
func (s *stdio) Write(p []byte) (int, error) {
	s.outMu.Lock()
	s.partial = append(s.partial, p...)
	var out []byte
	var answered []string
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		line, ids := s.outgoing(s.partial[:i])
		out, answered = append(append(out, line...), '\n'), append(answered, ids...)
		s.partial = s.partial[i+1:]
	}
	var err error
	if len(out) > 0 {
		_, err = s.out.Write(out)
	}
	// Answered once written: drain must not let kfa mcp exit before.
	s.mu.Lock()
	for _, key := range answered {
		delete(s.asked, key)
	}
	s.mu.Unlock()
	s.outMu.Unlock()
	select {
	case s.answered <- struct{}{}:
	default:
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// outgoing adapts one line of output, and returns the ids of the
// requests it answers.
func (s *stdio) outgoing(line []byte) ([]byte, []string) {
	msgs := messages(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	version := s.version
	var ids []string
	for _, e := range msgs {
		if e.Method != "" || !isID(e.ID) {
			continue // a request or notification of the server's own
		}
		key := idKey(e.ID)
		if s.inits[key] && e.Result.ProtocolVersion != "" {
			s.version = e.Result.ProtocolVersion
		}
		if v, ok := s.versions[key]; ok && len(msgs) == 1 {
			version = v
		}
		ids = append(ids, key)
		delete(s.inits, key)
		delete(s.versions, key)
	}
	return mcpserver.AdaptResponse(line, version), ids
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
