package command

import (
	"math/rand/v2"

	"basalt/internal/store"
)

// Random picks of collection members (HRANDFIELD, SRANDMEMBER, SPOP,
// ZRANDMEMBER).

// commandRand is the randomness of a command that picks members: the
// record's seed in the apply loop (SPOP, or a read inside MULTI), so that
// applying a record is deterministic; any source on a read view. salt
// keeps different commands in one record from drawing the same numbers.
func commandRand(c *Ctx, salt uint64) *rand.Rand {
	if c.Tx.Writable() {
		return rand.New(rand.NewPCG(c.Seed, salt))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// A member's sub key starts with the hash of the member, so "the first
// member at or after a random position" picks each member with the
// probability of the gap before it: some several times more often than
// average, a few almost never. randomMember instead
//   - walks to a uniformly drawn index in a collection of at most
//     randomExactMax members, which is exact, as Redis's listpacks are;
//   - picks uniformly among the randomWindow members from a random
//     position in a bigger one. Each member's chance is then the mean of
//     that many gaps: within about 25% of fair, which is as fair as
//     Redis's pick from a hashtable (dictGetFairRandomKey).
const (
	randomExactMax = 128
	randomWindow   = 16
)

// randomMember picks a random entry of key among the sub keys in
// [lo, lo+1) (lo is a tag, or nil for all), of which there are about n,
// leaving out those skip reports (skip may be nil). It returns copies, or
// a nil sub when no entry qualifies: a read view is no snapshot, so the
// collection may have shrunk since n was read.
func randomMember(c *Ctx, key, lo []byte, n int64, rng *rand.Rand, skip func(sub []byte) bool) (sub, value []byte) {
	var hi []byte
	if len(lo) > 0 {
		hi = append(lo[:len(lo)-1:len(lo)-1], lo[len(lo)-1]+1)
	}
	if n <= randomExactMax {
		n = max(n, 1)
		return nthMember(c, key, lo, hi, n, rng.Int64N(n), skip)
	}
	seen := 0
	visit := func(s, v []byte) bool {
		if skip != nil && skip(s) {
			return true
		}
		seen++
		if rng.IntN(seen) == 0 { // reservoir sampling: each one seen is equally likely
			sub = append(sub[:0], s...)
			value = append(value[:0], v...)
		}
		return seen < randomWindow
	}
	from := append(append([]byte(nil), lo...), store.PosBytes(rng.Uint64())...)
	c.Tx.Members(key, from, hi, false, visit)
	if seen < randomWindow { // wrap around
		c.Tx.Members(key, lo, from, false, visit)
	}
	return sub, value
}

// nthMember returns the i-th of the about n entries in [lo, hi) that skip
// does not leave out, walking from the nearer end. When there are fewer, it
// takes i modulo what it found.
func nthMember(c *Ctx, key, lo, hi []byte, n, i int64, skip func(sub []byte) bool) (sub, value []byte) {
	reverse := i >= n/2
	if reverse {
		i = n - 1 - i
	}
	for {
		seen := int64(0)
		c.Tx.Members(key, lo, hi, reverse, func(s, v []byte) bool {
			if skip != nil && skip(s) {
				return true
			}
			if seen == i {
				sub, value = append([]byte(nil), s...), append([]byte(nil), v...)
				return false
			}
			seen++
			return true
		})
		if sub != nil || seen == 0 {
			return sub, value
		}
		i %= seen
	}
}

// maxRepeatReply bounds the reply of a random pick with repeats
// (SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a negative count). Its
// length is the client's count, not the data's size: Redis builds it
// whatever the count, so -10000000000 exhausts memory. basalt answers
// errReplyTooLarge instead (docs/limits.md).
const maxRepeatReply = 128 << 20

const errReplyTooLarge = "ERR reply would be larger than 128mb, use a smaller count"

// minBulkLen is the smallest bulk string in RESP: "$0\r\n\r\n".
const minBulkLen = 6

// repeatReply guards one such reply. startRepeatReply refuses at once a
// count whose reply could not fit even with empty members. over, called
// after each pick, takes back what was written and answers the error once
// the reply, projected from the picks so far, would pass the bound: early,
// so that a refused reply never grows a buffer of the bound's size.
type repeatReply struct {
	c            *Ctx
	start        int
	count, picks int64
}

// projectAfter is how many picks the projection waits for: enough for an
// average of random picks to be steady.
const projectAfter = 64

// startRepeatReply checks count picks of one bulk string each, or two
// with pairs (WITHVALUES, WITHSCORES).
func startRepeatReply(c *Ctx, count int64, pairs bool) (*repeatReply, bool) {
	perPick := int64(1)
	if pairs {
		perPick = 2
	}
	if count > maxRepeatReply/(minBulkLen*perPick) {
		c.W.Error(errReplyTooLarge)
		return nil, false
	}
	return &repeatReply{c: c, start: c.W.Len(), count: count}, true
}

func (r *repeatReply) over() bool {
	r.picks++
	size := int64(r.c.W.Len() - r.start)
	if size <= maxRepeatReply && (r.picks < projectAfter || size/r.picks*r.count <= maxRepeatReply) {
		return false
	}
	// A copy, so that a big buffer is garbage now, whoever keeps the
	// writer (a pipeline, a script).
	r.c.W.Buf = append([]byte(nil), r.c.W.Buf[:r.start]...)
	r.c.W.Error(errReplyTooLarge)
	return true
}
