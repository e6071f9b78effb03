package store

// Memos. A read may keep something it derived from a string key's value
// with the key's entry in the metadata cache (PFCOUNT keeps the count an
// HLL's header holds), so that reads of the unchanged key answer without
// reading the value again. Every write of a string writes its metadata
// entry (strval.go), and the apply loop replaces the key's cache entry,
// memo and all, when the write commits, before the writer gets its reply:
// so a read never finds a memo older than a write that has answered.
//
// A memo is attached only to the very entry the reader saw before it read
// the value (Memo, then Remember): the value it read is at least as new as
// that entry. (It may be newer, by a write Pebble already holds whose cache
// update is on its way, as any read that goes to Pebble may see; that
// update drops the memo.) Only for strings: a collection's members may
// change without its metadata.

// MemoToken is what Remember needs from the Memo call that missed: the
// cache entry seen then.
type MemoToken struct{ seen []byte }

// Memo returns the memo kept for key if key is live and its cached entry
// carries one. On a miss, the token lets Remember attach a memo derived
// from what the Tx reads afterwards. Only a live read Tx has memos.
func (t *Tx) Memo(key []byte) (memo any, found bool, tok MemoToken) {
	if t.b != nil || t.snap != nil {
		return nil, false, MemoToken{}
	}
	t.scratch = t.metaKey(t.scratch[:0], key)
	e, ref, _, _ := t.st.cache.get(t.scratch)
	if ref == nil || !e.found {
		return nil, false, MemoToken{}
	}
	if e.memo != nil {
		if m, err := decodeMeta(e.value); err == nil && m.Type == TypeString && !m.Expired(t.Now) {
			return e.memo, true, MemoToken{}
		}
	}
	return nil, false, MemoToken{seen: e.value}
}

// Remember keeps memo, derived from key's string value as this Tx read it
// after the Memo call that returned tok, with the cache entry Memo saw if
// it is still key's entry.
func (t *Tx) Remember(key []byte, memo any, tok MemoToken) {
	if len(tok.seen) == 0 {
		return
	}
	t.scratch = t.metaKey(t.scratch[:0], key)
	t.st.cache.remember(t.scratch, memo, tok.seen)
}
