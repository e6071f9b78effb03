package store

// Local returns what a command kept for key in this Tx with SetLocal, or
// nil: a memo of what it derived from the key's members (a sorted set's
// rank path), which the next command on the key in the same group may
// reuse. The command drops it when it changes what the memo describes;
// the Tx drops all of them at a range deletion, which may have removed a
// key's members wholesale.
func (t *Tx) Local(key []byte) any {
	if t.local == nil {
		return nil
	}
	t.localKey = t.memberPrefix(t.localKey[:0], key)
	return t.local[string(t.localKey)]
}

// SetLocal keeps v for key in this Tx (nil drops it).
func (t *Tx) SetLocal(key []byte, v any) {
	t.localKey = t.memberPrefix(t.localKey[:0], key)
	if v == nil {
		delete(t.local, string(t.localKey))
		return
	}
	if t.local == nil {
		t.local = map[string]any{}
	}
	t.local[string(t.localKey)] = v
}
