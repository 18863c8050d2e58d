package identity

import (
	"context"
	"sync"

	"outpost/appliance/access"
)

// cache resolves certificate identities to principals, cached by name
// until the next change of who may see what.
type cache struct {
	dir *access.Directory

	mu  sync.Mutex // mu guards gen and m
	gen int64      // counts forget calls: a lookup begun before one is not kept
	m   map[string]access.Principal
}

// principal is the principal of the certificate identity name (cached).
func (c *cache) principal(ctx context.Context, name string) (access.Principal, error) {
	c.mu.Lock()
	p, ok := c.m[name]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := c.dir.ByName(ctx, name, nil)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return p, nil // a change came meanwhile: use the answer, do not keep it
	}
	if c.m == nil || len(c.m) > 4096 {
		c.m = map[string]access.Principal{}
	}
	c.m[name] = p
	return p, nil
}

// forget drops what was cached, and what lookups under way would keep.
func (c *cache) forget() {
	c.mu.Lock()
	c.m = nil
	c.gen++
	c.mu.Unlock()
}
