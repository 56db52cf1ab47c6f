package web

import (
	"testing"
	"time"
)

func TestRelativeTime(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"}, {59 * time.Second, "just now"}, {-30 * time.Second, "just now"},
		{time.Minute, "1 min ago"}, {59 * time.Minute, "59 min ago"}, {time.Hour, "1 h ago"}, {23 * time.Hour, "23 h ago"},
		{30 * time.Hour, "yesterday"}, {3 * 24 * time.Hour, "3 days ago"}, {45 * 24 * time.Hour, "1 month ago"},
		{100 * 24 * time.Hour, "3 months ago"}, {800 * 24 * time.Hour, "2 years ago"}, {-48 * time.Hour, "on 4 Dec 2026"},
	} {
		if got := relativeTime(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%s ago: %q, want %q", tc.ago, got, tc.want)
		}
	}
	got := string(timeElement(now.Add(-5*time.Minute), now))
	want := `<time datetime="2026-12-02T10:25:00.000Z" title="2 Dec 2026, 10:25 UTC">5 min ago</time>`
	if got != want {
		t.Fatalf("time element:\n%s\nwant\n%s", got, want)
	}
}

func TestFormatTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Why does bbolt Open hang?", "Why does bbolt Open hang?"},
		{"It hangs in `bolt.Open`, why?", "It hangs in <code>bolt.Open</code>, why?"},
		{"`a` and `b`", "<code>a</code> and <code>b</code>"},
		{"a `<script>` tag & `x<y`", "a <code>&lt;script&gt;</code> tag &amp; <code>x&lt;y</code>"},
		{"a lone ` backtick", "a lone ` backtick"},
		{"an empty `` span", "an empty `` span"},
		{"<b>bold</b> is text", "&lt;b&gt;bold&lt;/b&gt; is text"},
		{"*not emphasis*", "*not emphasis*"},
	} {
		if got := string(formatTitle(tc.in)); got != tc.want {
			t.Errorf("formatTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
