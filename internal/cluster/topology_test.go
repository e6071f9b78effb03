package cluster

import (
	"fmt"
	"reflect"
	"testing"
)

func TestEvenSlots(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 7, 1024} {
		ranges := EvenSlots(n)
		next, lo, hi := 0, SlotCount, 0
		for _, s := range ranges {
			if len(s) != 1 || int(s[0].Start) != next {
				t.Fatalf("EvenSlots(%d): %v does not follow slot %d", n, s, next)
			}
			c := s.Count()
			lo, hi = min(lo, c), max(hi, c)
			next = int(s[0].End) + 1
		}
		if next != SlotCount || hi-lo > 1 {
			t.Fatalf("EvenSlots(%d): ends at %d, sizes %d..%d", n, next, lo, hi)
		}
	}
}

func TestSlotsMerge(t *testing.T) {
	var s Slots
	for _, r := range []SlotRange{{0, 9}, {10, 19}, {30, 39}, {40, 40}} {
		s = s.Merge(r)
	}
	if want := (Slots{{0, 19}, {30, 40}}); !reflect.DeepEqual(s, want) {
		t.Fatalf("merged %v, want %v", s, want)
	}
	if !s.Contains(19) || s.Contains(20) || s.Count() != 31 {
		t.Fatalf("%v: Contains or Count wrong", s)
	}
}

// Every node of a new cluster computes the same topology from the same
// flags, whichever node it is: names, slots and replicas.
func TestNewTopologyAgrees(t *testing.T) {
	nodes := map[uint64]string{1: "a:1", 2: "b:1", 3: "c:1"}
	t1 := NewTopology("seed", 1, nodes, 6, 3)
	t3 := NewTopology("seed", 3, nodes, 6, 3)
	t3.NodeID = 1
	if !reflect.DeepEqual(t1, t3) {
		t.Fatalf("nodes 1 and 3 disagree:\n%+v\n%+v", t1, t3)
	}
	if err := t1.check(); err != nil {
		t.Fatal(err)
	}
	for i, sh := range t1.Shards {
		if want := t1.Nodes[i%3].ID; sh.Replicas[0] != want || len(sh.Replicas) != 3 {
			t.Fatalf("shard %d's replicas %v: want 3, %d first", i, sh.Replicas, want)
		}
	}
	if other := NewTopology("other", 1, nodes, 6, 3); other.Nodes[0].Name == t1.Nodes[0].Name {
		t.Fatal("another seed gave the same node name")
	}
	bad := NewTopology("seed", 1, nodes, 2, 3)
	bad.Shards[1].Slots[0].Start-- // one slot twice
	if bad.check() == nil {
		t.Fatal("a slot served twice passed the check")
	}
}

// With fewer replicas than nodes, every node holds as many replicas as
// the others (give or take one) and preferred leaderships likewise, and a
// shard's replicas are distinct nodes.
func TestNewTopologySpreads(t *testing.T) {
	for _, c := range []struct{ nodes, shards, replicas int }{{5, 2, 3}, {5, 5, 3}, {4, 4, 3}, {5, 8, 3}, {3, 4, 3}, {4, 6, 2}} {
		nodes := map[uint64]string{}
		for id := 1; id <= c.nodes; id++ {
			nodes[uint64(id)] = fmt.Sprintf("n%d:1", id)
		}
		topo := NewTopology("seed", 1, nodes, c.shards, c.replicas)
		if err := topo.check(); err != nil {
			t.Fatal(err)
		}
		held, leads := map[uint64]int{}, map[uint64]int{}
		for _, sh := range topo.Shards {
			if len(sh.Replicas) != c.replicas {
				t.Fatalf("%+v: shard %d has replicas %v", c, sh.Index, sh.Replicas)
			}
			seen := map[uint64]bool{}
			for _, id := range sh.Replicas {
				if seen[id] {
					t.Fatalf("%+v: shard %d has node %d twice: %v", c, sh.Index, id, sh.Replicas)
				}
				seen[id] = true
				held[id]++
			}
			leads[sh.Replicas[0]]++
		}
		spread := func(what string, m map[uint64]int, total int) {
			lo, hi := total, 0
			for id := range nodes {
				lo, hi = min(lo, m[id]), max(hi, m[id])
			}
			if hi-lo > 1 {
				t.Fatalf("%+v: %s per node %v", c, what, m)
			}
		}
		spread("replicas", held, c.shards*c.replicas)
		if c.shards >= c.nodes {
			spread("leaders", leads, c.shards)
		}
	}
}
