package store

// The cluster's topology (internal/cluster.Topology, as JSON) is one state
// entry of the metadata group's store, written through that group's log:
// every node holds a replica, so every node reads the same committed
// topology, and a change to it is one linearizable write.
var topologyKey = stateKey("topology")

// PutTopology stores the cluster's topology.
func (t *Tx) PutTopology(b []byte) {
	t.mustWrite()
	t.set(topologyKey, b)
}

// Topology returns the topology stored, if one was.
func (t *Tx) Topology() ([]byte, bool) { return t.get(topologyKey) }
