package shard

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"basalt/internal/transport"

	"go.etcd.io/raft/v3/raftpb"
)

// Host is what the shards of one node share in a cluster: one Raft
// transport, whose connection to each peer node carries the messages of
// every group the two host together (the design's "one connection per peer
// pair"). A shard's replica ID holds its group (transport.ReplicaID), so
// the host hands each message, snapshot and report to the group it names.
type Host struct {
	tr *transport.Transport

	mu     sync.RWMutex
	groups map[uint32]*node
}

// HostConfig configures NewHost.
type HostConfig struct {
	NodeID    uint64 // below 2^32
	RaftAddr  string
	Advertise string // the node's client address, for its peers
	Secret    []byte
	ClusterID uint64
	// ServerTLS and ClientTLS, if set, run the connections over mutual TLS.
	ServerTLS, ClientTLS *tls.Config
}

// NewHost starts the node's transport; shards join it through Config.Host.
func NewHost(cfg HostConfig) (*Host, error) {
	h := &Host{groups: map[uint32]*node{}}
	h.tr = &transport.Transport{ID: cfg.NodeID, Addr: cfg.RaftAddr, Advertise: cfg.Advertise,
		Secret: cfg.Secret, Cluster: cfg.ClusterID, Member: h.member,
		ServerTLS: cfg.ServerTLS, ClientTLS: cfg.ClientTLS,
		Logf: func(format string, args ...any) { slog.Warn(fmt.Sprintf(format, args...)) },
		Unreachable: func(id uint64) {
			// A node is unreachable for every group it hosts.
			for _, n := range h.all() {
				n.reportUnreachable(transport.ReplicaID(transport.GroupOf(n.s.cfg.ID), transport.NodeOf(id)))
			}
		},
		SnapshotSource: func(m raftpb.Message, w io.Writer) error {
			n := h.group(m.From)
			if n == nil {
				return fmt.Errorf("no group %d here", transport.GroupOf(m.From))
			}
			return n.s.streamSnapshot(m, w)
		},
		SnapshotSink: func(m raftpb.Message, r io.Reader) error {
			n := h.group(m.To)
			if n == nil {
				return fmt.Errorf("no group %d here", transport.GroupOf(m.To))
			}
			return n.s.receiveSnapshot(m, r)
		},
		SnapshotDone: func(to uint64, ok bool) {
			if n := h.group(to); n != nil {
				n.snapshotDone(to, ok)
			}
		},
	}
	err := h.tr.Start(func(m raftpb.Message) {
		if n := h.group(m.To); n != nil {
			n.receive(m)
		}
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Transport is the host's transport.
func (h *Host) Transport() *transport.Transport { return h.tr }

// Close stops the transport, once the shards are closed.
func (h *Host) Close() { h.tr.Stop() }

func (h *Host) add(n *node) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.groups[transport.GroupOf(n.s.cfg.ID)] = n
}

func (h *Host) remove(n *node) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.groups, transport.GroupOf(n.s.cfg.ID))
}

// group is the local replica of the group id names.
func (h *Host) group(id uint64) *node {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.groups[transport.GroupOf(id)]
}

func (h *Host) all() []*node {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]*node, 0, len(h.groups))
	for _, n := range h.groups {
		out = append(out, n)
	}
	return out
}

// member reports whether node id is a member of a group this node hosts.
func (h *Host) member(id uint64) bool {
	for _, n := range h.all() {
		if n.member(transport.ReplicaID(transport.GroupOf(n.s.cfg.ID), id)) {
			return true
		}
	}
	return false
}
