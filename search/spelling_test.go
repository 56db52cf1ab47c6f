package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

// TestMisspeltQueries: a misspelt word is searched as the indexed word
// one edit away, whether or not another word of the query is known, and
// the answer says which query it answered. A query none of whose words
// is known is corrected only by a lone correction (see corrections), so
// nonsense and ordinary words about other subjects stay an honest miss.
func TestMisspeltQueries(t *testing.T) {
	f := setup(t, samples(t))
	for _, tc := range []struct {
		query     string
		top       string // "" for no hits
		corrected string
		corr      []knowledge.Correction
	}{
		// Every word unknown, each a plain typo.
		{"cerbot", "tls-certificate-expired", "certbot", []knowledge.Correction{{From: "cerbot", To: "certbot"}}},
		{"Certbt", "tls-certificate-expired", "certbot", []knowledge.Correction{{From: "certbt", To: "certbot"}}},
		{"dokcer", "docker-socket-permission-denied", "docker", []knowledge.Correction{{From: "dokcer", To: "docker"}}},
		{"kuberntes", "kubernetes-crashloopbackoff", "kubernetes", []knowledge.Correction{{From: "kuberntes", To: "kubernetes"}}},
		// A known word beside the typo, as before.
		{"renew cerbot", "tls-certificate-expired", "renew certbot", []knowledge.Correction{{From: "cerbot", To: "certbot"}}},
		{"nginx 502 bad gatway", "nginx-502-bad-gateway", "nginx 502 bad gateway", []knowledge.Correction{{From: "gatway", To: "gateway"}}},
		// Honest misses: nonsense, words too short to tell, ordinary words
		// one letter from an indexed one, and a query with one word that
		// reads as nothing.
		{"zxqvj", "", "", nil},
		{"xqzvwkj plorf", "", "", nil},
		{"purl", "", "", nil},
		{"knitting purl yarn", "", "", nil},
		{"bread", "", "", nil},
		{"butter", "", "", nil},
		{"chair", "", "", nil},
		{"shirt", "", "", nil},
		{"marathon tapering", "", "", nil},
		{"cerbot zxqvjw", "", "", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res, err := f.idx.Search(context.Background(), knowledge.Query{Text: tc.query, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(res.Hits)
			if tc.top == "" && len(got) > 0 || tc.top != "" && (len(got) == 0 || got[0] != tc.top) {
				t.Errorf("hits %v, want top %q", got, tc.top)
			}
			if res.CorrectedQuery != tc.corrected || fmt.Sprint(res.Corrections) != fmt.Sprint(tc.corr) {
				t.Errorf("corrected %q %v, want %q %v", res.CorrectedQuery, res.Corrections, tc.corrected, tc.corr)
			}
		})
	}
}

func TestLoneEdit(t *testing.T) {
	for _, tc := range []struct {
		t, c string
		ok   bool
	}{
		{"cerbot", "certbot", true},    // a letter left out
		{"nginxx", "nginx", true},      // a letter doubled
		{"dokcer", "docker", true},     // neighbours swapped
		{"butter", "better", false},    // a letter replaced
		{"bread", "read", false},       // the first letter
		{"ecrbot", "cerbot", false},    // the first two swapped
		{"quokka3", "quokka13", false}, // a digit added
		{"http2", "http", false},       // a digit left out
	} {
		if got := loneEdit(tc.t, tc.c); got != tc.ok {
			t.Errorf("loneEdit(%q, %q) = %v, want %v", tc.t, tc.c, got, tc.ok)
		}
	}
}
