package docs

import (
	"os"
	"testing"

	"github.com/kfa-project/kfa/internal/testbin"
)

// TestMain removes the kfa binary the tests built, if they built one.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
