package knowledge_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoTransportOrStorage: the records rules stay free of
// HTTP and of the database, whatever is added later.
func TestDomainImportsNoTransportOrStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "net/http" || strings.HasPrefix(dep, "go.etcd.io/bbolt") || strings.HasPrefix(dep, "github.com/blevesearch/") {
			t.Errorf("knowledge depends on %s", dep)
		}
	}
}
