package agents

import (
	"context"
	"sync"

	"github.com/kfa-project/kfa/changelog"
)

// CredCache remembers Authenticate's answers by token digest, so that a
// request's bearer token costs a map lookup instead of a read of the
// store (on PostgreSQL, a round trip). One cache serves a process on
// either store.
//
// It stays true because it follows the change log: an agent.revoked,
// agent.rotated or agent.unlinked event, made through any process, drops
// the agent's entries (Apply). It is trusted only while its follower has read the
// log recently (Options.Fresh): when the follower stalls, or cannot
// read the log, every lookup goes to the store. A revoke or rotate made
// through this process's Service also drops the entries itself before it
// answers, so the old token is refused here at once. An answer read
// before such a drop is never kept after it: a reader notes the cache's
// generation before it reads, and keeps its answer only if no drop has
// happened since.
type CredCache struct {
	fresh func() bool

	mu      sync.Mutex
	gen     uint64
	m       map[Digest]credEntry
	byAgent map[string][]Digest
}

type credEntry struct {
	agent Agent
	cred  Credential
}

// credCacheMax bounds the cache; when it is full it starts over.
const credCacheMax = 16 << 10

// NewCredCache returns an empty cache, trusted while fresh reports true
// (normally: the follower that applies the log to it has read the log
// within the last second).
func NewCredCache(fresh func() bool) *CredCache {
	return &CredCache{fresh: fresh}
}

// get returns the cached answer for d, and the generation to put a new
// one at; ok is false when there is none or the cache is not trusted now.
func (c *CredCache) get(d Digest) (credEntry, uint64, bool) {
	trusted := c.fresh()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[d]
	return e, c.gen, ok && trusted
}

// put keeps an answer read at generation gen, unless a drop came since.
func (c *CredCache) put(d Digest, e credEntry, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= credCacheMax {
		c.m, c.byAgent = make(map[Digest]credEntry), make(map[string][]Digest)
	}
	if _, had := c.m[d]; !had {
		c.byAgent[e.agent.ID] = append(c.byAgent[e.agent.ID], d)
	}
	c.m[d] = e
}

// Drop forgets every answer of agent id, and any answer being read now.
func (c *CredCache) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, d := range c.byAgent[id] {
		delete(c.m, d)
	}
	delete(c.byAgent, id)
}

// Len is the number of cached answers.
func (c *CredCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Apply implements changelog.Follower: a rotation, a revocation, or an
// identity moved off a revoked agent, made by any process, drops the
// agent's answers (the identity's among them).
func (c *CredCache) Apply(_ context.Context, evs []changelog.Event) error {
	for _, e := range evs {
		if e.Kind == changelog.AgentRevoked || e.Kind == changelog.AgentRotated || e.Kind == changelog.AgentUnlinked {
			c.Drop(e.ID)
		}
	}
	return nil
}

var _ changelog.Follower = (*CredCache)(nil)

// Forget implements changelog.Forgetter: when the database lost events
// (a failover under asynchronous replication), a credential created or
// rotated in the lost writes may be cached; every answer is dropped, and
// read again from the database.
func (c *CredCache) Forget(context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m, c.byAgent = nil, nil
}

var _ changelog.Forgetter = (*CredCache)(nil)
