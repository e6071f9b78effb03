package command

import (
	"basalt/internal/store"
)

// Arg returns argument i as a string.
func (c *Ctx) Arg(i int) string { return string(c.Args[i]) }

// Lookup returns key's metadata if it exists and has type t. When it exists
// with another type it answers WRONGTYPE and returns wrong = true.
func (c *Ctx) Lookup(key []byte, t store.Type) (m store.Meta, ok, wrong bool) {
	m, ok = c.Tx.Lookup(key)
	return c.checkType(m, ok, t)
}

// LookupShared is Lookup for a caller that never modifies m.Body: in a read
// it may be the metadata cache's own bytes (store.Tx.LookupShared).
func (c *Ctx) LookupShared(key []byte, t store.Type) (m store.Meta, ok, wrong bool) {
	m, ok = c.Tx.LookupShared(key)
	return c.checkType(m, ok, t)
}

func (c *Ctx) checkType(m store.Meta, ok bool, t store.Type) (store.Meta, bool, bool) {
	if ok && m.Type != t {
		c.W.Error(ErrWrongType)
		return m, false, true
	}
	return m, ok, false
}
