package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRenderBench runs the render measurement and prints its lines: every
// time is measured and every target judged (the times themselves depend
// on the machine and are not checked).
func TestRenderBench(t *testing.T) {
	r := measureRender()
	if r.WorstBody == "" || r.WorstBodyTime.Wall <= 0 || r.ReviewPage.Wall <= 0 || r.MixedPage.Wall <= 0 || r.MixedPageWarm.Wall <= 0 {
		t.Fatalf("a time was not measured: %+v", r)
	}
	var b bytes.Buffer
	printRender(&b, r)
	if got := strings.Count(b.String(), ": met") + strings.Count(b.String(), ": NOT MET"); got != 3 {
		t.Fatalf("%d targets printed, want 3:\n%s", got, b.String())
	}
	t.Log(b.String())
}
