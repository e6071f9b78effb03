package command

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"basalt/internal/shard"
	"basalt/internal/store"
)

// A stream's header agrees with its stored nodes and entries after random
// appends, trims of every kind and deletions: head and tail are the first
// and last nodes, first is the first entry, each node counts its entries.
// Scans start at head and first, so a header ahead of its data would hide
// entries.
func TestStreamHeaderInvariants(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	st, _ := applySets(t, nil)
	next := 1
	for step := range 1500 {
		var args []string
		switch k := r.IntN(10); {
		case k < 5:
			args = []string{"XADD", "s"}
			switch r.IntN(4) {
			case 0:
				args = append(args, "MAXLEN", strconv.Itoa(r.IntN(300)))
			case 1:
				args = append(args, "MAXLEN", "~", strconv.Itoa(r.IntN(300)))
			case 2:
				args = append(args, "MINID", fmt.Sprintf("%d-1", next-r.IntN(400)))
			}
			args = append(args, fmt.Sprintf("%d-1", next), "f", strconv.Itoa(step))
			next++
		case k < 8:
			args = []string{"XDEL", "s"}
			for range 1 + r.IntN(5) {
				args = append(args, fmt.Sprintf("%d-1", next-1-r.IntN(300)))
			}
		case k < 9:
			args = []string{"XTRIM", "s", "MINID", fmt.Sprintf("%d-1", next-r.IntN(300))}
		default:
			args = []string{"XTRIM", "s", "MAXLEN", "~", strconv.Itoa(r.IntN(200))}
		}
		applyTo(t, st, []*shard.Record{{Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{setArgv(args)}}})
		checkStreamHeader(t, st, args)
	}
}

func checkStreamHeader(t *testing.T, st *store.Store, after []string) {
	t.Helper()
	tx := st.ReadTx(0, 1e12, true)
	defer tx.Close()
	m, ok := tx.Lookup([]byte("s"))
	if !ok {
		return
	}
	h := decodeStreamHeader(m.Body)
	var nodes []node
	tx.Members([]byte("s"), []byte{'n'}, []byte{'n' + 1}, false, func(sub, v []byte) bool {
		nodes = append(nodes, decodeNode(idFrom(sub[1:]), append([]byte(nil), v...)))
		return true
	})
	var entries []streamID
	tx.Members([]byte("s"), []byte{'e'}, []byte{'e' + 1}, false, func(sub, _ []byte) bool {
		entries = append(entries, idFrom(sub[1:]))
		return true
	})
	fail := func(format string, a ...any) {
		t.Fatalf("after %v: "+format, append([]any{after}, a...)...)
	}
	if h.nodes != uint64(len(nodes)) || h.length != uint64(len(entries)) {
		fail("header says %d nodes, %d entries; stored %d, %d", h.nodes, h.length, len(nodes), len(entries))
	}
	if len(nodes) == 0 {
		if !h.head.isZero() || !h.tail.isZero() {
			fail("no nodes, head %v tail %v", h.head, h.tail)
		}
		return
	}
	if h.head != nodes[0].first || h.tail != nodes[len(nodes)-1].first {
		fail("head %v tail %v, nodes from %v to %v", h.head, h.tail, nodes[0].first, nodes[len(nodes)-1].first)
	}
	if len(entries) > 0 && h.first != entries[0] {
		fail("first %v, first entry %v", h.first, entries[0])
	}
	for _, n := range nodes {
		live := 0
		for _, id := range entries {
			if id.cmp(n.first) >= 0 && id.cmp(n.last) <= 0 {
				live++
			}
		}
		if uint64(live) != n.live || live == 0 {
			fail("node %v-%v counts %d entries, holds %d", n.first, n.last, n.live, live)
		}
	}
}
