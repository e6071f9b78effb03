package store

// DeleteMemberRange removes the members of key whose sub keys are in
// [from, to) with one range deletion, whatever their number (a stream's
// consumer group and its pending entries, for XGROUP DESTROY).
func (t *Tx) DeleteMemberRange(key, from, to []byte) {
	t.mustWrite()
	p := t.memberPrefix(nil, key)
	lo := append(append([]byte(nil), p...), from...)
	hi := append(append([]byte(nil), p...), to...)
	t.delRange(lo, hi)
}
