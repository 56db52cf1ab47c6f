package docs

import (
	"os"
	"strings"
	"testing"
)

// TestPushDocShowsTheReceiver: the Go receiver push.md shows is the file
// docs/pushreceiver/receiver.go, which its own test runs against a real
// kfa, so the page's code compiles and works.
func TestPushDocShowsTheReceiver(t *testing.T) {
	page, err := os.ReadFile("push.md")
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("pushreceiver/receiver.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```go\n"+string(code)+"```\n") {
		t.Fatal("push.md does not show docs/pushreceiver/receiver.go as it is: paste the file into its ```go block")
	}
}
