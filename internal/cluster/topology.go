package cluster

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// SlotRange is the slots Start..End, both included.
type SlotRange struct {
	Start uint16 `json:"start"`
	End   uint16 `json:"end"`
}

// Slots is a set of slots as sorted, disjoint ranges.
type Slots []SlotRange

// Contains reports whether slot is in the set.
func (s Slots) Contains(slot uint16) bool {
	for _, r := range s {
		if slot >= r.Start && slot <= r.End {
			return true
		}
	}
	return false
}

// Merge adds r, which starts after every range of s, joining it to the
// last range if they touch.
func (s Slots) Merge(r SlotRange) Slots {
	if n := len(s); n > 0 && s[n-1].End+1 == r.Start {
		s[n-1].End = r.End
		return s
	}
	return append(s, r)
}

// Count is the number of slots in the set.
func (s Slots) Count() int {
	n := 0
	for _, r := range s {
		n += int(r.End-r.Start) + 1
	}
	return n
}

// EvenSlots divides the 16384 slots into n contiguous ranges whose sizes
// differ by at most one, as redis-cli --cluster create does.
func EvenSlots(n int) []Slots {
	out := make([]Slots, n)
	start := 0
	for i := range n {
		end := start + (SlotCount-start)/(n-i) - 1
		out[i] = Slots{{uint16(start), uint16(end)}}
		start = end + 1
	}
	return out
}

// Shard is one Raft group of the cluster and the slots it serves.
type Shard struct {
	Index    int      `json:"index"` // position in Topology.Shards; its Raft group and directory
	Name     string   `json:"name"`  // 40 hex characters
	Slots    Slots    `json:"slots"`
	Replicas []uint64 `json:"replicas"` // the nodes that hold a replica, the preferred leader first
}

// Node is a node of the cluster.
type Node struct {
	ID       uint64 `json:"id"`   // --node-id
	Name     string `json:"name"` // 40 hex characters: CLUSTER MYID, NODES
	RaftAddr string `json:"raft_addr,omitempty"`
}

// Topology is how the slots are divided among the shards, where each
// shard's replicas are, and the names that Redis Cluster clients see. Every
// node of a new cluster computes the same one from the cluster's flags
// (NewTopology) and writes it when it first starts; every later start
// reads it back, so a shard's slots and replicas never move with a
// changed flag.
type Topology struct {
	ClusterID string  `json:"cluster_id"`
	NodeID    uint64  `json:"node_id"` // this node
	Epoch     uint64  `json:"epoch"`
	Nodes     []Node  `json:"nodes"`
	Shards    []Shard `json:"shards"`
}

// NewTopology is the topology of a new cluster of nodes (ID -> Raft
// address; one node with no address for a lone node) with n shards of
// replicas replicas each, seen from node me. Names are derived from seed,
// so nodes given the same seed agree. The replicas are dealt out in turn
// over the nodes in ID order, so each node holds as many as the others,
// give or take one; each shard's preferred leader (its first replica) is
// the one of its nodes that leads fewest shards so far, so leaders spread
// evenly too.
func NewTopology(seed string, me uint64, nodes map[uint64]string, n, replicas int) *Topology {
	t := &Topology{ClusterID: nameOf(seed, "cluster"), NodeID: me, Epoch: 1}
	for id, addr := range nodes {
		t.Nodes = append(t.Nodes, Node{ID: id, Name: nameOf(seed, fmt.Sprintf("node %d", id)), RaftAddr: addr})
	}
	sort.Slice(t.Nodes, func(i, j int) bool { return t.Nodes[i].ID < t.Nodes[j].ID })
	replicas = min(replicas, len(t.Nodes))
	leads := map[uint64]int{}
	next := 0 // the node the next replica goes to
	for i, slots := range EvenSlots(n) {
		sh := Shard{Index: i, Name: nameOf(seed, fmt.Sprintf("shard %d", i)), Slots: slots}
		for range replicas {
			sh.Replicas = append(sh.Replicas, t.Nodes[next%len(t.Nodes)].ID)
			next++
		}
		lead := 0
		for k, id := range sh.Replicas {
			if leads[id] < leads[sh.Replicas[lead]] {
				lead = k
			}
		}
		leads[sh.Replicas[lead]]++
		sh.Replicas[0], sh.Replicas[lead] = sh.Replicas[lead], sh.Replicas[0]
		t.Shards = append(t.Shards, sh)
	}
	return t
}

// Node returns the node of ID id, nil if none.
func (t *Topology) Node(id uint64) *Node {
	for i := range t.Nodes {
		if t.Nodes[i].ID == id {
			return &t.Nodes[i]
		}
	}
	return nil
}

// Me is this node.
func (t *Topology) Me() *Node { return t.Node(t.NodeID) }

// Hosts reports whether shard sh has a replica on node id.
func (sh *Shard) Hosts(id uint64) bool { return slices.Contains(sh.Replicas, id) }

// ShardBySlot maps each slot to the index of the shard serving it (-1:
// none).
func (t *Topology) ShardBySlot() []int {
	out := make([]int, SlotCount)
	for i := range out {
		out[i] = -1
	}
	for i, sh := range t.Shards {
		for _, r := range sh.Slots {
			for s := int(r.Start); s <= int(r.End); s++ {
				out[s] = i
			}
		}
	}
	return out
}

// Shared is the topology as the metadata group stores it: JSON, the same
// on every node (no NodeID).
func (t *Topology) Shared() []byte {
	c := *t
	c.NodeID = 0
	b, _ := json.Marshal(&c)
	return b
}

// ParseShared reads a topology the metadata group stored, as node me sees
// it.
func ParseShared(b []byte, me uint64) (*Topology, error) {
	t := &Topology{}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, err
	}
	t.NodeID = me
	return t, t.check()
}

// topologyFile is where a node keeps its topology in its data directory.
const topologyFile = "topology.json"

// LoadOrCreateTopology reads dir's topology, or writes create's if there
// is none. created says it was new.
func LoadOrCreateTopology(dir string, create func() (*Topology, error)) (t *Topology, created bool, err error) {
	path := filepath.Join(dir, topologyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		t = &Topology{}
		if err := json.Unmarshal(b, t); err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		if err := t.check(); err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return t, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if t, err = create(); err != nil {
		return nil, false, err
	}
	if err := t.check(); err != nil {
		return nil, false, err
	}
	if err := SaveTopology(dir, t); err != nil {
		return nil, false, err
	}
	return t, true, nil
}

// SaveTopology writes t as dir's topology, replacing the one there.
func SaveTopology(dir string, t *Topology) error {
	b, _ := json.MarshalIndent(t, "", "  ")
	return writeFileSynced(filepath.Join(dir, topologyFile), b)
}

// check verifies that every slot is served by exactly one shard.
func (t *Topology) check() error {
	if len(t.Shards) == 0 || len(t.Shards) > SlotCount {
		return fmt.Errorf("%d shards: between 1 and %d are possible", len(t.Shards), SlotCount)
	}
	if t.Me() == nil {
		return fmt.Errorf("this node (%d) is not one of the cluster's nodes", t.NodeID)
	}
	seen := make([]bool, SlotCount)
	for i, sh := range t.Shards {
		if sh.Index != i {
			return fmt.Errorf("shard %d has index %d", i, sh.Index)
		}
		if len(sh.Replicas) == 0 {
			return fmt.Errorf("shard %d has no replicas", i)
		}
		for _, id := range sh.Replicas {
			if t.Node(id) == nil {
				return fmt.Errorf("shard %d has a replica on node %d, which is not in the cluster", i, id)
			}
		}
		for _, r := range sh.Slots {
			if r.Start > r.End || r.End >= SlotCount {
				return fmt.Errorf("shard %d: bad slot range %d-%d", i, r.Start, r.End)
			}
			for s := r.Start; s <= r.End; s++ {
				if seen[s] {
					return fmt.Errorf("slot %d is served twice", s)
				}
				seen[s] = true
			}
		}
	}
	return nil
}

// writeFileSynced writes path through a temporary file, synced and renamed,
// so a crash leaves the old file or the new one.
func writeFileSynced(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// nameOf is a Redis Cluster node or shard name (40 hex characters),
// derived from the cluster's seed and what it names.
func nameOf(seed, what string) string {
	sum := sha256.Sum256([]byte(seed + "\x00" + what))
	return hex.EncodeToString(sum[:20])
}

// RandomSeed is the seed of a lone node's topology.
func RandomSeed() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}
