package server

import (
	"strings"
	"testing"
	"time"
)

func TestValidateLogRetention(t *testing.T) {
	tests := []struct {
		name string
		v    time.Duration
		want string // "" for valid
	}{
		{"the default", DefaultConfig().LogRetention, ""},
		{"zero keeps everything", 0, ""},
		{"a week", 7 * 24 * time.Hour, ""},
		{"negative", -time.Hour, "log-retention: -1h0m0s must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.LogRetention = tt.v
			err := c.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	if DefaultConfig().LogRetention != 720*time.Hour {
		t.Fatalf("default retention %s, want 720h (30 days)", DefaultConfig().LogRetention)
	}
}
