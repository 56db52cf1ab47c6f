package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kfa-project/kfa/markdown"
	"github.com/kfa-project/kfa/markdown/markdowntest"
)

// Issue 31's targets for rendering what agents write (point 1, the
// Markdown bomb).
const (
	renderBodyTarget = 10 * time.Millisecond
	renderPageTarget = 200 * time.Millisecond
	renderPageBodies = 50
)

// RenderBench is the CPU time the web view takes to render hostile
// bodies, cold (a renderer that has kept nothing, as after a restart)
// and warm (the same page shown again), with the wall time beside it.
// The targets are judged on CPU time: on a shared machine the wall time
// also counts the turns of every other process.
type RenderBench struct {
	WorstBody string // the hostile body that took longest
	// WorstBodyTime is its cold render.
	WorstBodyTime cost
	// The review's page: 50 replies of nested quotes (">\t" 10,000
	// times), then a page of 50 bodies cycling through every hostile
	// body known (markdowntest).
	ReviewPage, MixedPage, MixedPageWarm cost
}

// cost is the CPU time (this process's, the garbage collector's
// included) and the wall time of one run.
type cost struct{ CPU, Wall time.Duration }

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureRender renders markdowntest's hostile bodies as the web view
// does (markdown.Renderer), each on its own and as the bodies of a
// 50-reply page; each time is the best of three runs.
func measureRender() RenderBench {
	var r RenderBench
	best := func(f func()) cost {
		c := cost{CPU: 1<<63 - 1}
		for range 3 {
			start, cpu := time.Now(), processCPU()
			f()
			if d := processCPU() - cpu; d < c.CPU {
				c = cost{CPU: d, Wall: time.Since(start)}
			}
		}
		return c
	}
	bodies := markdowntest.Hostile()
	for _, b := range bodies {
		if d := best(func() { markdown.NewRenderer(markdown.Options{}).HTML(b.Text) }); d.CPU > r.WorstBodyTime.CPU {
			r.WorstBody, r.WorstBodyTime = b.Name, d
		}
	}
	// Every reply of a page differs (a reply's number is added), so
	// that none is the one kept from the reply before.
	page := func(body func(i int) string) func() {
		return func() {
			md := markdown.NewRenderer(markdown.Options{})
			for i := range renderPageBodies {
				md.HTML(body(i))
			}
		}
	}
	review := func(i int) string { return fmt.Sprintf("%s\n\nreply %d", bodies[0].Text, i) }
	mixed := func(i int) string { return fmt.Sprintf("%s\n\nreply %d", bodies[i%len(bodies)].Text, i) }
	r.ReviewPage = best(page(review))
	r.MixedPage = best(page(mixed))
	md := markdown.NewRenderer(markdown.Options{})
	shown := func() {
		for i := range renderPageBodies {
			md.HTML(mixed(i))
		}
	}
	shown()
	r.MixedPageWarm = best(shown)
	return r
}

// printRender prints the render times beside issue 31's targets, with
// the load the machine was under.
func printRender(out io.Writer, r RenderBench) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, c cost, target time.Duration) {
		judged := ""
		if target > 0 {
			judged = "< " + ms(target) + ": met"
			if c.CPU >= target {
				judged = "< " + ms(target) + ": NOT MET"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, ms(c.CPU), ms(c.Wall), judged)
	}
	fmt.Fprintf(out, "\nRENDERING HOSTILE MARKDOWN (issue 31, point 1): best of 3, load average %s\n", loadAverage())
	fmt.Fprintf(tw, "\tCPU\twall\ttarget (CPU)\t\n")
	row("worst body ("+r.WorstBody+"), cold", r.WorstBodyTime, renderBodyTarget)
	row(fmt.Sprintf("the review's page, %d nested-quote replies, cold", renderPageBodies), r.ReviewPage, renderPageTarget)
	row(fmt.Sprintf("%d replies of every hostile body, cold", renderPageBodies), r.MixedPage, renderPageTarget)
	row("the same page shown again", r.MixedPageWarm, 0)
	_ = tw.Flush()
	fmt.Fprintf(out, "(bodies are kept once rendered, except those whose code ran out of its %s highlight budget)\n", markdown.DefaultHighlightBudget)
}

// loadAverage is the machine's one-minute load average, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
