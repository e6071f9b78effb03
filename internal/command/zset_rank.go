package command

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"

	"basalt/internal/store"
)

// The rank index of a big sorted set. Walking the score index to a rank
// costs O(rank): seconds on a ten-million-member leaderboard. From
// zrankBuildAt members on, a sorted set also keeps a tree of counts among
// its member entries, in two kinds of entries:
//
//	'r' | level | bound -> ""                                 a block
//	'c' | level | bound -> uvarint count | uvarint children    its counts
//
// A bound is a point of the score index (a score index key without its
// tag); the empty bound, first of every level, stands for -inf. A level-L
// block covers the score index from its bound to the next level-L bound:
// count is the number of members there, children the number of level-(L-1)
// blocks there (at level 1 the members themselves, so children == count).
// Every level-L bound is also a level-(L-1) bound, so a level-L block is a
// run of whole level-(L-1) blocks, and the top level (the header's levels)
// holds one block, the root, whose count is the set's size: that is the
// header's, and the root's own is left stale so that writes need not
// rewrite it. A bound need not be a member: removing a member changes
// counts, never bounds.
//
// Counts change with every write and bounds almost never, hence the two
// kinds: Pebble keeps every version of an entry in its memtables until a
// flush, and iterating over an entry rewritten thousands of times steps
// over all its versions. So 'r' entries, which are iterated, are written
// only when a block is created and deleted when it goes, and 'c' entries,
// rewritten on every change, are only ever read with point lookups.
//
//   - The number of members before a point x (ZRANK) is found from the root
//     down: on each level, the current block's children are listed (at most
//     2F+1 bounds) and the walk goes on in the last one whose
//     bound is <= x, adding the counts of the children before it (or the
//     block's count less the counts from it on, whichever means fewer
//     lookups); at the bottom it counts the members from that level-1
//     block's bound to x, at most 2B+1 of them (B, of level 1, is larger
//     than F because walking members costs less than looking up counts).
//     That is O(F log_F n + B) entries read. Finding the member at a rank
//     (ZRANGE, ZREMRANGEBYRANK) descends the same way.
//   - Adding a member adds 1 to the block holding it on every level below
//     the root (one seek per level). A block grown past 2F children splits at its middle
//     child, walking its children once; that adds a child to its parent,
//     which may split in turn, up to the root, which grows a level when it
//     splits. Removing a member subtracts 1; a block left with fewer than F/4
//     children merges into its left sibling (or, if it is its parent's first
//     child, takes in its right one) when both fit in 2F, which may shrink
//     the parent in turn; a root left with one child gives up its level.
//
// The index is built when a set reaches zrankBuildAt members (zset.save
// walks the set once) and dropped when it falls below zrankDropAt, so small
// sets pay nothing. Living under the key's member prefix, it goes wherever
// the members go: DEL, expiry and FLUSHDB drop it with them in one range
// deletion, RENAME, COPY and MOVE copy it, SWAPDB swaps it. Everything here
// reads and writes the Tx, so applying a record stays deterministic.

// Tuning of the rank index (variables so tests can make trees deep on small
// sets).
var (
	zrankLeaf    int64 = 128  // a level-1 block has B to 2B members after a split
	zrankFan     int64 = 32   // a block above has F to 2F children after a split
	zrankBuildAt int64 = 1024 // a set this big gets an index
	zrankDropAt  int64 = 256  // and loses it below this
)

const (
	zTagRank  = 'r'
	zTagCount = 'c'
)

// zrankWidth is B on level 1 and F above: a level-l block splits past
// twice that many children and merges below a quarter of it.
func zrankWidth(level int) int64 {
	if level == 1 {
		return zrankLeaf
	}
	return zrankFan
}

// zRankSub is the sub key of the level-level block at bound.
func zRankSub(level int, bound []byte) []byte {
	return append([]byte{zTagRank, byte(level)}, bound...)
}

// zScoreAt is the score index key of bound.
func zScoreAt(bound []byte) []byte { return append([]byte{zTagScore}, bound...) }

// rnode is one block of the rank index.
type rnode struct {
	level           int
	bound           []byte
	count, children int64
}

// rnode reads the counts of the level-level block at bound.
func (z *zset) rnode(level int, bound []byte) rnode {
	n := rnode{level: level, bound: bound}
	v, ok := z.c.Tx.Member(z.key, append([]byte{zTagCount, byte(level)}, bound...))
	if !ok {
		panic("zset: rank index block without counts")
	}
	c, k := binary.Uvarint(v)
	ch, _ := binary.Uvarint(v[k:])
	n.count, n.children = int64(c), int64(ch)
	return n
}

// putCounts writes a block's counts, held in the Tx (the writes of a group
// to one set rewrite the upper levels' counts each time); putRNode also
// creates the block.
func (z *zset) putCounts(n rnode) {
	v := binary.AppendUvarint(make([]byte, 0, 8), uint64(n.count))
	v = binary.AppendUvarint(v, uint64(n.children))
	z.c.Tx.HoldMember(z.key, append([]byte{zTagCount, byte(n.level)}, n.bound...), v)
}

// blockChanged notes a block made (added) or dropped: the rank path is
// no longer sure, the bounds the Tx keeps follow a block below the root,
// and a change of the root's level drops them.
func (z *zset) blockChanged(level int, bound []byte, added bool) {
	l := z.local(false)
	if l == nil {
		return
	}
	l.path = nil
	if b := l.bounds; b != nil {
		if level >= b.levels {
			l.bounds = nil
		} else {
			b.change(level, bound, added)
		}
	}
}

func (z *zset) putRNode(n rnode) {
	z.blockChanged(n.level, n.bound, true)
	z.c.Tx.SetMember(z.key, zRankSub(n.level, n.bound), nil)
	z.putCounts(n)
}

func (z *zset) delRNode(level int, bound []byte) {
	z.blockChanged(level, bound, false)
	z.c.Tx.DeleteMember(z.key, zRankSub(level, bound))
	z.c.Tx.DeleteMember(z.key, append([]byte{zTagCount, byte(level)}, bound...))
}

func (z *zset) rankIter() *store.MemberIter {
	return z.c.Tx.MemberIter(z.key, []byte{zTagRank}, []byte{zTagRank + 1})
}

// children lists the bounds of the k level-level blocks from bound on (the
// children of a level-(level+1) block at bound with k children).
func (z *zset) children(level int, bound []byte, k int64) [][]byte {
	it := z.rankIter()
	out := make([][]byte, 0, k)
	for ok := it.SeekGE(zRankSub(level, bound)); ok && int64(len(out)) < k; ok = it.Next() {
		sub := it.Sub()
		if sub[1] != byte(level) {
			break
		}
		out = append(out, append([]byte{}, sub[2:]...))
	}
	it.Close()
	if int64(len(out)) != k {
		panic("zset: rank index block with missing children")
	}
	return out
}

// sumCounts adds up the counts of the level-level blocks at bounds.
func (z *zset) sumCounts(level int, bounds [][]byte) int64 {
	var sum int64
	for _, b := range bounds {
		sum += z.rnode(level, b).count
	}
	return sum
}

// rankBefore returns the number of members whose score index key is before
// that of bound x (the set is indexed).
func (z *zset) rankBefore(x []byte) int64 {
	var acc int64
	n := z.rnode(z.levels, nil)
	n.count = z.h.n
	for l := z.levels - 1; l >= 1; l-- {
		kids := z.children(l, n.bound, n.children)
		i := 0
		for i+1 < len(kids) && bytes.Compare(kids[i+1], x) <= 0 {
			i++
		}
		if i <= len(kids)/2 {
			acc += z.sumCounts(l, kids[:i])
			n = z.rnode(l, kids[i])
		} else {
			after := z.rnode(l, kids[i])
			acc += n.count - after.count - z.sumCounts(l, kids[i+1:])
			n = after
		}
	}
	z.c.Tx.Members(z.key, zScoreAt(n.bound), zScoreAt(x), false, func(_, _ []byte) bool {
		acc++
		return true
	})
	return acc
}

// seekRank returns the score index key to walk from to reach the member
// of rank r (0-based, below the set's size), and how many members to skip
// from there (the set is indexed).
func (z *zset) seekRank(r int64) (from []byte, skip int64) {
	var acc int64 // members before block n
	n := z.rnode(z.levels, nil)
	n.count = z.h.n
	for l := z.levels - 1; l >= 1; l-- {
		kids := z.children(l, n.bound, n.children)
		if r-acc < n.count/2 {
			// From the first child on.
			for i := 0; ; i++ {
				k := z.rnode(l, kids[i])
				if acc+k.count > r || i == len(kids)-1 {
					n = k
					break
				}
				acc += k.count
			}
		} else {
			// From the last child back.
			end := acc + n.count
			for i := len(kids) - 1; ; i-- {
				k := z.rnode(l, kids[i])
				end -= k.count
				if end <= r || i == 0 {
					acc, n = end, k
					break
				}
			}
		}
	}
	return zScoreAt(n.bound), r - acc
}

// rankAdd counts a member added (d = 1) at score index key ssub, or
// removed (d = -1), and splits or merges blocks as needed. The member's
// score entry is already written (or deleted).
func (z *zset) rankAdd(ssub []byte, d int64) {
	x := ssub[1:]
	path := make([]rnode, z.levels+1) // path[l]: the level-l block holding x
	path[z.levels] = rnode{level: z.levels, bound: []byte{}}
	local := z.local(true)
	rp := local.path
	if !rp.holds(z.levels, x) {
		rp = z.findPath(x, rp)
		local.path = rp
	}
	for l := 1; l < z.levels; l++ {
		path[l] = z.rnode(l, rp.bound[l])
		path[l].count += d
		if l == 1 {
			path[l].children += d
		}
		z.putCounts(path[l])
	}
	z.loadRoot(path, 1)
	if d > 0 {
		z.rankSplit(path)
	} else {
		z.rankMerge(path)
	}
}

// rankPath is where rankAdd last found a member's blocks in this Tx: on
// each level l below the root, the block's bound and, once two members in
// a row fell in the same blocks, the next block's (nil: none), so that the
// next member added or removed in them (a run of ZPOPMINs, ZADDs of close
// scores) seeks nothing. The seek is what costs: blocks merged away at the
// front of a set that is popped leave deletions between the first block
// and the members, and each seek steps over all of them. Finding the next
// bounds costs a seek per level too, hence the wait for a second member:
// ZADDs of random scores never pay it. A block made or dropped ends the
// path (putRNode, delRNode).
type rankPath struct {
	levels      int
	bound, next [][]byte // by level
	nextKnown   bool
}

func (p *rankPath) holds(levels int, x []byte) bool {
	if p == nil || p.levels != levels || !p.nextKnown {
		return false
	}
	for l := 1; l < levels; l++ {
		if bytes.Compare(p.bound[l], x) > 0 || p.next[l] != nil && bytes.Compare(x, p.next[l]) >= 0 {
			return false
		}
	}
	return true
}

// rankBounds is every block bound below the root of a set's rank index,
// by level, in order, as a write Tx that adds or removes many members at
// random points of a big set keeps them: a seek per level costs microseconds
// (it merges the batch, the memtables and the levels of Pebble), a search
// of the bounds in memory nanoseconds. Reading them all costs about as much
// as a seek per rankBoundsPerSeek bounds, so the Tx reads them once it has
// sought that much (zsetLocal.seeks), and keeps them in step with the
// blocks it makes and drops (blockChanged).
type rankBounds struct {
	levels int        // the index's levels when read
	bounds [][][]byte // by level, from 1
}

const rankBoundsPerSeek = 64

// readBounds reads the bounds of every level below the root.
func (z *zset) readBounds() *rankBounds {
	b := &rankBounds{levels: z.levels, bounds: make([][][]byte, z.levels)}
	it := z.rankIter()
	defer it.Close()
	for ok := it.SeekGE(zRankSub(1, nil)); ok; ok = it.Next() {
		sub := it.Sub()
		if l := int(sub[1]); l < z.levels {
			b.bounds[l] = append(b.bounds[l], append([]byte{}, sub[2:]...))
		}
	}
	return b
}

// find returns the index at level l of the last bound <= x.
func (b *rankBounds) find(l int, x []byte) int {
	return sort.Search(len(b.bounds[l]), func(i int) bool { return bytes.Compare(b.bounds[l][i], x) > 0 }) - 1
}

// change adds bound to level l (added) or removes it.
func (b *rankBounds) change(l int, bound []byte, added bool) {
	i := b.find(l, bound)
	at := i >= 0 && bytes.Equal(b.bounds[l][i], bound)
	switch {
	case added && !at:
		b.bounds[l] = slices.Insert(b.bounds[l], i+1, append([]byte{}, bound...))
	case !added && at:
		b.bounds[l] = slices.Delete(b.bounds[l], i, i+1)
	}
}

// path is findPath from the bounds, next blocks included.
func (b *rankBounds) path(x []byte) *rankPath {
	p := &rankPath{levels: b.levels, bound: make([][]byte, b.levels), next: make([][]byte, b.levels), nextKnown: true}
	for l := 1; l < b.levels; l++ {
		i := b.find(l, x)
		if i < 0 {
			panic("zset: rank index without its first block")
		}
		p.bound[l] = b.bounds[l][i]
		if i+1 < len(b.bounds[l]) {
			p.next[l] = b.bounds[l][i+1]
		}
	}
	return p
}

// findPath finds the blocks holding point x below the root, and their
// next blocks if they are those prev found (or if the Tx keeps the bounds).
func (z *zset) findPath(x []byte, prev *rankPath) *rankPath {
	l := z.local(true)
	if l.bounds != nil && l.bounds.levels != z.levels {
		l.bounds = nil
	}
	if l.bounds == nil {
		if l.seeks += int64(z.levels - 1); l.seeks*rankBoundsPerSeek >= z.h.n/zrankLeaf {
			l.bounds = z.readBounds()
		}
	}
	if l.bounds != nil {
		return l.bounds.path(x)
	}
	p := &rankPath{levels: z.levels, bound: make([][]byte, z.levels)}
	it := z.rankIter()
	defer it.Close()
	same := prev != nil && prev.levels == z.levels
	for l := 1; l < z.levels; l++ {
		if !it.SeekLT(append(zRankSub(l, x), 0)) || it.Sub()[1] != byte(l) {
			panic("zset: rank index without its first block")
		}
		p.bound[l] = append([]byte{}, it.Sub()[2:]...)
		same = same && bytes.Equal(p.bound[l], prev.bound[l])
	}
	if !same {
		return p
	}
	p.next = make([][]byte, z.levels)
	for l := 1; l < z.levels; l++ {
		if it.SeekGE(append(zRankSub(l, p.bound[l]), 0)) && it.Sub()[1] == byte(l) {
			p.next[l] = append([]byte{}, it.Sub()[2:]...)
		}
	}
	p.nextKnown = true
	return p
}

// loadRoot reads the root into path[l] if level l is the root's, with
// its true count, before a split or merge uses it (rankAdd does not read
// it otherwise).
func (z *zset) loadRoot(path []rnode, l int) {
	if l == z.levels {
		path[l] = z.rnode(l, nil)
		path[l].count = z.h.n
		if l == 1 {
			path[l].children = z.h.n
		}
	}
}

// rankSplit splits the blocks of path that outgrew 2F children, from level 1 up.
func (z *zset) rankSplit(path []rnode) {
	for l := 1; l <= z.levels; l++ {
		n := path[l]
		if n.children <= 2*zrankWidth(l) {
			return
		}
		// The new block starts at the middle child.
		mid := n.children / 2
		var bound []byte
		var moved int64
		if l == 1 {
			i := int64(0)
			z.c.Tx.Members(z.key, zScoreAt(n.bound), zScoreEnd, false, func(sub, _ []byte) bool {
				if i == mid {
					bound = append([]byte{}, sub[1:]...)
					return false
				}
				i++
				return true
			})
			moved = n.count - mid
		} else {
			kids := z.children(l-1, n.bound, n.children)
			bound = kids[mid]
			moved = z.sumCounts(l-1, kids[mid:])
		}
		path[l].count -= moved
		path[l].children = mid
		z.putCounts(path[l])
		z.putRNode(rnode{level: l, bound: bound, count: moved, children: n.children - mid})
		if l == z.levels {
			// The root split: a new root above the two halves.
			z.levels++
			z.putRNode(rnode{level: z.levels, bound: []byte{}, count: n.count, children: 2})
			return
		}
		z.loadRoot(path, l+1)
		path[l+1].children++
		z.putCounts(path[l+1])
	}
}

// rankMerge merges the blocks of path left with fewer than F/4 children
// into a sibling, from level 1 up, and lowers a root left with one child.
func (z *zset) rankMerge(path []rnode) {
	for l := 1; l < z.levels; l++ {
		n := path[l]
		if n.children >= zrankWidth(l)/4 {
			return
		}
		if !bytes.Equal(n.bound, path[l+1].bound) {
			// Not its parent's first child: into the block before it.
			it := z.rankIter()
			if !it.SeekLT(zRankSub(l, n.bound)) || it.Sub()[1] != byte(l) {
				panic("zset: rank index block without its parent's first child")
			}
			left := z.rnode(l, append([]byte{}, it.Sub()[2:]...))
			it.Close()
			if left.children+n.children > 2*zrankWidth(l) {
				return
			}
			z.delRNode(l, n.bound)
			left.count += n.count
			left.children += n.children
			z.putCounts(left)
			path[l] = left
		} else {
			// Its parent's first child: take in the next block if it has
			// the same parent.
			it := z.rankIter()
			ok := it.SeekGE(append(zRankSub(l, n.bound), 0)) && it.Sub()[1] == byte(l)
			var rb []byte
			if ok {
				rb = append([]byte{}, it.Sub()[2:]...)
			}
			it.Close()
			if !ok {
				return
			}
			if _, other := z.c.Tx.Member(z.key, zRankSub(l+1, rb)); other {
				return
			}
			right := z.rnode(l, rb)
			if right.children+n.children > 2*zrankWidth(l) {
				return
			}
			z.delRNode(l, rb)
			n.count += right.count
			n.children += right.children
			z.putCounts(n)
			path[l] = n
		}
		z.loadRoot(path, l+1)
		path[l+1].children--
		z.putCounts(path[l+1])
	}
	// A root with one child: that child (the first block of the level
	// below, the only one there) becomes the root.
	for z.levels > 1 && path[z.levels].children == 1 {
		z.delRNode(z.levels, nil)
		z.levels--
	}
}

// rankBuild builds the index of a set that has none: blocks of B members,
// then blocks of F blocks, up to a single root.
func (z *zset) rankBuild() {
	var level []rnode
	var i int64
	z.c.Tx.Members(z.key, zScoreFirst, zScoreEnd, false, func(sub, _ []byte) bool {
		if i%zrankLeaf == 0 {
			b := []byte{}
			if i > 0 {
				b = append(b, sub[1:]...)
			}
			level = append(level, rnode{level: 1, bound: b})
		}
		level[len(level)-1].count++
		level[len(level)-1].children++
		i++
		return true
	})
	l := 1
	for {
		for _, n := range level {
			z.putRNode(n)
		}
		if len(level) == 1 {
			break
		}
		var up []rnode
		for j, n := range level {
			if int64(j)%zrankFan == 0 {
				up = append(up, rnode{level: l + 1, bound: n.bound})
			}
			up[len(up)-1].count += n.count
			up[len(up)-1].children++
		}
		level = up
		l++
	}
	z.levels = l
}

// rankDrop deletes the index.
func (z *zset) rankDrop() {
	z.c.Tx.DeleteMemberRange(z.key, []byte{zTagCount}, []byte{zTagCount + 1})
	z.c.Tx.DeleteMemberRange(z.key, []byte{zTagRank}, []byte{zTagRank + 1})
	z.levels = 0
}
