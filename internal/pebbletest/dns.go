package pebbletest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// startDNS serves DNS over TCP on a loopback port (Pebble asks over TCP)
// until t ends: every A question is answered 127.0.0.1, any other with
// no record, so whatever name a test asks a certificate for, Pebble
// validates it on loopback. It returns the address.
func startDNS(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveDNS(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// serveDNS answers the length-prefixed messages of one TCP connection.
func serveDNS(c net.Conn) {
	defer c.Close()
	for {
		var n uint16
		if err := binary.Read(c, binary.BigEndian, &n); err != nil {
			return
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		answer, err := answerDNS(msg)
		if err != nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(answer)))
		if _, err := c.Write(append(out, answer...)); err != nil {
			return
		}
	}
}

func answerDNS(msg []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	if h.Response {
		return nil, errors.New("not a question")
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
