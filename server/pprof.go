package server

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves the Go profiler on cfg.PprofAddr, on a listener of its
// own so the profiler is never reachable through the public address. It is
// off unless asked for (the load benchmark asks for it on loopback).
func (s *Server) startPprof() error {
	if s.cfg.PprofAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.PprofAddr)
	if err != nil {
		return fmt.Errorf("listen on pprof address %s: %w", s.cfg.PprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.pprof.Serve(ln) }()
	s.log.Info("pprof serving", "addr", ln.Addr().String())
	return nil
}

// stopPprof closes the profiler's listener; a profile in progress is cut off.
func (s *Server) stopPprof() {
	if s.pprof != nil {
		_ = s.pprof.Close()
	}
}
