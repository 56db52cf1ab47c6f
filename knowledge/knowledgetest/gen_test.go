package knowledgetest

import (
	"bytes"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

func TestGeneratedRecordsAreValidAndStable(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteJSONL(&a, 7, 200, 50); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONL(&b, 7, 200, 50); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same seed generated different records")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(a.Bytes(), []byte("\n")), []byte("\n")) {
		_, err := knowledge.ParseLine(i+1, line)
		if (err != nil) != (i+1 == 50) {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
}
