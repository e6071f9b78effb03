package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	Index int    `json:"index"` // position in Topology.Shards; names its directory
	Name  string `json:"name"`  // 40 hex characters: CLUSTER SHARDS's and MYSHARDID's id
	Slots Slots  `json:"slots"`
}

// Topology is how a node's slots are divided among its shards, and the
// names that Redis Cluster clients see. A node writes it when it first
// starts in cluster mode and reads it back at every start, so the slots of
// a shard never move with a changed flag.
type Topology struct {
	ClusterID string  `json:"cluster_id"`
	NodeName  string  `json:"node_name"` // 40 hex characters: CLUSTER MYID
	Epoch     uint64  `json:"epoch"`
	Shards    []Shard `json:"shards"`
}

// NewTopology is the topology of a new node with n shards.
func NewTopology(n int) *Topology {
	t := &Topology{ClusterID: randomName(), NodeName: randomName(), Epoch: 1}
	for i, slots := range EvenSlots(n) {
		t.Shards = append(t.Shards, Shard{Index: i, Name: randomName(), Slots: slots})
	}
	return t
}

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

// topologyFile is where a node keeps its topology in its data directory.
const topologyFile = "topology.json"

// LoadOrCreateTopology reads dir's topology, or writes a new one of n
// shards if there is none. created says it was new.
func LoadOrCreateTopology(dir string, n int) (t *Topology, created bool, err error) {
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
	if n < 1 || n > SlotCount {
		return nil, false, fmt.Errorf("cluster-shards must be between 1 and %d", SlotCount)
	}
	t = NewTopology(n)
	b, _ = json.MarshalIndent(t, "", "  ")
	if err := writeFileSynced(path, b); err != nil {
		return nil, false, err
	}
	return t, true, nil
}

// check verifies that every slot is served by exactly one shard.
func (t *Topology) check() error {
	if len(t.Shards) == 0 {
		return errors.New("no shards")
	}
	seen := make([]bool, SlotCount)
	for i, sh := range t.Shards {
		if sh.Index != i {
			return fmt.Errorf("shard %d has index %d", i, sh.Index)
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

// randomName is a Redis Cluster node or shard name: 40 hex characters.
func randomName() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}
