package markdown

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// lru keeps what was made of a body (its page's HTML, its text) by the
// hash of the body and the kind, dropping the least recently used past
// max bytes.
type lru struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *entry, most recent first
	byKey map[[sha256.Size]byte]*list.Element
}

type entry struct {
	key [sha256.Size]byte
	val string
}

func newLRU(maxBytes int) *lru {
	return &lru{max: maxBytes, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

// key is what an entry of kind ('h' for HTML, 't' for text) of body is
// kept under.
func key(kind byte, body string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{kind})
	h.Write([]byte(body))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *lru) get(k [sha256.Size]byte) (string, bool) {
	if c.max == 0 {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).val, true
}

func (c *lru) put(k [sha256.Size]byte, v string) {
	cost := len(v) + sha256.Size
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&entry{key: k, val: v})
	c.size += cost
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*entry)
		c.order.Remove(last)
		delete(c.byKey, e.key)
		c.size -= len(e.val) + sha256.Size
	}
}
