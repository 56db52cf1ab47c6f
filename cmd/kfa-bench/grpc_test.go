package main

import (
	"strings"
	"testing"
)

// TestGRPCBenchPrint: the gRPC comparison names both bindings, the ratio
// of the two, and says why it was not measured when it was not.
func TestGRPCBenchPrint(t *testing.T) {
	var out strings.Builder
	g := &GRPCBench{HTTPGetTask: Throughput{Workers: 16, PerSec: 4000}, GRPCGetTask: Throughput{Workers: 16, PerSec: 2000},
		HTTPAsks: Throughput{Workers: 64, PerSec: 300}, GRPCAsks: Throughput{Workers: 64, PerSec: 270}, GRPCConns: 4, HTTPConnsUpTo: 64}
	g.print(&out)
	for _, want := range []string{"GRPC vs HTTP+JSON", "GetTask, gRPC", "0.50x", "durable ask, gRPC", "0.90x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	out.Reset()
	(&GRPCBench{Skipped: "kfa serve --grpc-addr did not start"}).print(&out)
	if !strings.Contains(out.String(), "not measured (kfa serve --grpc-addr did not start)") {
		t.Errorf("skipped: %s", out.String())
	}
	out.Reset()
	(*GRPCBench)(nil).print(&out)
	if out.Len() != 0 {
		t.Errorf("nil: %q", out.String())
	}
}
