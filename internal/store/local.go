package store

// Local returns what a command kept for key in this Tx with SetLocal, or
// nil: a memo of what it derived from the key's members (a sorted set's
// rank path), which the next command on the key in the same group may
// reuse. The command drops it when it changes what the memo describes;
// the Tx drops all of them at a range deletion, which may have removed a
// key's members wholesale.
func (t *Tx) Local(key []byte) any { return t.local[string(t.memberPrefix(nil, key))] }

// SetLocal keeps v for key in this Tx (nil drops it).
func (t *Tx) SetLocal(key []byte, v any) {
	k := string(t.memberPrefix(nil, key))
	if v == nil {
		delete(t.local, k)
		return
	}
	if t.local == nil {
		t.local = map[string]any{}
	}
	t.local[k] = v
}
