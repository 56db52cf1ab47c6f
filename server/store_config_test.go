package server

import (
	"strings"
	"testing"
)

// TestValidateStore: --store takes a PostgreSQL URL or nothing, and a bad
// value is refused without printing it (it may hold a password).
func TestValidateStore(t *testing.T) {
	tests := []struct {
		name  string
		store string
		pool  int
		want  string // "" for valid
	}{
		{"unset: the bbolt file", "", 0, ""},
		{"postgres", "postgres://kfa:pw@127.0.0.1:5432/kfa", 0, ""},
		{"postgresql scheme", "postgresql://kfa:pw@db/kfa?sslmode=require", 8, ""},
		{"another database", "mysql://kfa:s3cretpw@db/kfa", 0, "store: want a postgres://"},
		{"a file path", "/var/lib/kfa/kfa.db", 0, "store: want a postgres://"},
		{"negative pool", "postgres://kfa:pw@db/kfa", -1, "store-pool-size: -1 must be between 0 and 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Store, c.StorePoolSize = tt.store, tt.pool
			err := c.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cretpw") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}
