package store

import (
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
)

// credCache remembers Authenticate's answers by token digest, so that a
// request's bearer token costs a map lookup instead of a read transaction
// and two JSON decodes.
//
// It is safe because every write to agents or credentials goes through
// this *DB (kfa serve holds the file's lock; the CLI reaches a running
// server through its admin socket and opens the file itself only when no
// server holds it), and each such write clears the cache when its
// transaction commits, before the write returns (credentialsChanged). So
// a revoked agent or a rotated token is refused from the moment revoke or
// rotate answers. An answer read before such a commit is never cached
// after it: readers note the cache's generation before they read, and
// keep their answer only if no write has bumped it since.
type credCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[agents.Digest]credEntry
}

type credEntry struct {
	agent agents.Agent
	cred  agents.Credential
}

// credCacheMax bounds the cache; when it is full it starts over.
const credCacheMax = 16 << 10

func (c *credCache) get(d agents.Digest) (credEntry, uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.m[d]
	return e, c.gen, ok
}

// put stores an answer read at generation gen, unless a write came since.
func (c *credCache) put(d agents.Digest, e credEntry, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= credCacheMax {
		c.m = make(map[agents.Digest]credEntry)
	}
	c.m[d] = e
}

func (c *credCache) invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.mu.Unlock()
}

// credentialsChanged must be called by every transaction that writes an
// agent or a credential: it empties the credential cache once tx commits.
func (s *DB) credentialsChanged(tx *bolt.Tx) {
	tx.OnCommit(s.creds.invalidate)
}
