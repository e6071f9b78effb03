package command

import "basalt/internal/store"

// String commands (t_string.c in Redis). A string's value is the body of its
// metadata entry, so GET is one Pebble read.
func init() {
	register(
		&Command{Name: "get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Categories: []string{"read", "string", "fast"}, Group: "string", Since: "1.0.0", Summary: "Returns the string value of a key.", Run: cmdGet},
		&Command{Name: "set", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Categories: []string{"write", "string", "slow"}, Group: "string", Since: "1.0.0", Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", Run: cmdSet},
	)
}

func cmdGet(c *Ctx) {
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeString)
	switch {
	case wrong:
	case !ok:
		c.W.Null()
	default:
		c.W.Bulk(m.Body)
	}
}

func cmdSet(c *Ctx) {
	c.Tx.Put(c.Args[1], store.Meta{Type: store.TypeString, Body: c.Args[2]})
	c.W.OK()
}
