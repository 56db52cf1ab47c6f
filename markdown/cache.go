package markdown

import (
	"container/list"
	"crypto/sha256"
	"html/template"
	"sync"
)

// lru keeps rendered HTML by the hash of its body, dropping the least
// recently used past max bytes.
type lru struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *entry, most recent first
	byKey map[[sha256.Size]byte]*list.Element
}

type entry struct {
	key  [sha256.Size]byte
	html template.HTML
}

func newLRU(maxBytes int) *lru {
	return &lru{max: maxBytes, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

func (c *lru) get(body string) (template.HTML, bool) {
	if c.max == 0 {
		return "", false
	}
	k := sha256.Sum256([]byte(body))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).html, true
}

func (c *lru) put(body string, h template.HTML) {
	cost := len(h) + sha256.Size
	if cost > c.max {
		return
	}
	k := sha256.Sum256([]byte(body))
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&entry{key: k, html: h})
	c.size += cost
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*entry)
		c.order.Remove(last)
		delete(c.byKey, e.key)
		c.size -= len(e.html) + sha256.Size
	}
}
