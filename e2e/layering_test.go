package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainKnowsNoTransportOrStorage enforces the layering: the domain
// packages import neither net/http nor bbolt, bindings never open the
// store, and no binding imports another.
func TestDomainKnowsNoTransportOrStorage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list dependencies: %v", err)
	}
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/kfa-project/kfa/agents", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/tasks", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/discussions", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/knowledge", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/sessions", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/service", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/a2a", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/push", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/signing", []string{"net/http", "go.etcd.io/bbolt"}},
		// The sender talks HTTP, but never to the store behind the outbox's interface.
		{"github.com/kfa-project/kfa/webhook", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store"}},
		// No binding imports another: what they share is internal/httpkit.
		{"github.com/kfa-project/kfa/httpjson", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/jsonrpc", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/admin", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/admin", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/web", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin",
			"github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/mcpserver", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin",
			"github.com/kfa-project/kfa/web", "github.com/kfa-project/kfa/server", "github.com/kfa-project/kfa/search"}},
	} {
		out, err := exec.Command(goTool, "list", "-deps", tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, l := range strings.Split(string(out), "\n") {
			deps[strings.TrimSpace(l)] = true
		}
		for _, f := range tc.forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s", tc.pkg, f)
			}
		}
	}
}
