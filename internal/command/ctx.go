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
	if ok && m.Type != t {
		c.W.Error(ErrWrongType)
		return m, false, true
	}
	return m, ok, false
}
