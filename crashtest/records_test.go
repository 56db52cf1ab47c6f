package crashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// importRecords runs kfa records import (through the server's admin socket)
// in a loop until stop closes; an import that exits 0 is acknowledged.
func importRecords(bin, data, dir string, l *ledger, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		if importBatch(bin, data, dir, l, n) != nil {
			return
		}
	}
}

// importBatch imports 50 new records with kfa records import and, when it
// exits 0, adds them to the ledger. It fails only when it cannot write
// the input file.
func importBatch(bin, data, dir string, l *ledger, n int) error {
	batch := fmt.Sprintf("%d-%d", time.Now().UnixNano(), n)
	var lines []string
	var ids []string
	for i := range 50 {
		id := fmt.Sprintf("crash-%s-%d", batch, i)
		ids = append(ids, id)
		b, _ := json.Marshal(map[string]any{"id": id, "kind": "fix", "title": "crash record " + id,
			"body": "A record imported while kfa is being killed, number " + id + "."})
		lines = append(lines, string(b))
	}
	file := filepath.Join(dir, "import-"+batch+".jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	err := exec.Command(bin, "records", "import", file, "--data", data, "--json").Run()
	_ = os.Remove(file)
	if err == nil {
		l.mu.Lock()
		for _, id := range ids {
			l.records[id] = true
		}
		l.mu.Unlock()
	}
	return nil
}

// verifyRecords checks that every acknowledged import is stored and that
// the search index has caught up with the change feed.
func verifyRecords(t *testing.T, bin, data string, l *ledger) {
	t.Helper()
	var recs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(run(t, bin, "records", "list", "--limit", "0", "--data", data, "--json"), &recs); err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(recs))
	for _, r := range recs {
		have[r.ID] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.records {
		if !have[id] {
			t.Fatalf("acknowledged imported record %s lost", id)
		}
	}
	var st struct {
		IndexLag *int64 `json:"indexLag"`
	}
	if err := json.Unmarshal(run(t, bin, "stats", "--data", data, "--json"), &st); err != nil || st.IndexLag == nil || *st.IndexLag != 0 {
		t.Fatalf("the search index has not caught up after restart: %v %v", st.IndexLag, err)
	}
}
