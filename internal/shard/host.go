package shard

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"basalt/internal/transport"

	"go.etcd.io/raft/v3/raftpb"
)

// Host is what the shards of one node share in a cluster: one Raft
// transport, whose connection to each peer node carries the messages of
// every group the two host together (the design's "one connection per peer
// pair"). A shard's replica ID holds its group (transport.ReplicaID), so
// the host hands each message, snapshot and report to the group it names.
//
// A node need not host every group. So that it can send a client to the
// leader of a group it does not host, each host tells every other node,
// a few times a second, which groups its node leads and in which term
// (leadership news, on the same connections); the others keep the news
// with the highest term for each group (LeaderOf).
type Host struct {
	tr      *transport.Transport
	me      uint64
	nodes   map[uint64]string // every node of the cluster: ID -> Raft address
	relayed func(channel, message []byte)

	mu        sync.RWMutex
	groups    map[uint32]*node
	news      map[uint32]leaderNews
	lastHeard map[uint64]time.Time // when each node's news last came

	stop chan struct{}
	done chan struct{}
}

// leaderNews is the latest a host heard of a group's leader: the node,
// its term, and when the news came.
type leaderNews struct {
	node, term uint64
	at         time.Time
}

// newsGroup is the group ID that leadership news travels under: no group
// of replicas has it.
const newsGroup = 1<<32 - 1

// How often a host sends its news, and how long news stays true without
// being repeated: a leader that stopped telling is taken to be gone.
const (
	newsEvery = 200 * time.Millisecond
	newsFresh = 1500 * time.Millisecond
)

// HostConfig configures NewHost.
type HostConfig struct {
	NodeID   uint64 // below 2^32
	RaftAddr string
	// Nodes is every node of the cluster (ID -> Raft address), this one
	// too: each hears this host's leadership news, and may talk to it
	// whether or not the two share a group.
	Nodes map[uint64]string
	// Relayed hears the pub/sub messages other nodes relay to this one
	// (Relay).
	Relayed   func(channel, message []byte)
	Advertise string // the node's client address, for its peers (ClientAddr)
	Secret    []byte
	ClusterID uint64
	// ServerTLS and ClientTLS, if set, run the connections over mutual TLS.
	ServerTLS, ClientTLS *tls.Config
}

// NewHost starts the node's transport; shards join it through Config.Host.
func NewHost(cfg HostConfig) (*Host, error) {
	h := &Host{me: cfg.NodeID, nodes: cfg.Nodes, relayed: cfg.Relayed, groups: map[uint32]*node{}, news: map[uint32]leaderNews{}, lastHeard: map[uint64]time.Time{},
		stop: make(chan struct{}), done: make(chan struct{})}
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
		if transport.GroupOf(m.To) == newsGroup {
			switch {
			case m.Type == raftpb.MsgHeartbeat:
				h.heard(transport.NodeOf(m.From), m.Context)
			case m.Type == raftpb.MsgProp && h.relayed != nil:
				if n, k := binary.Uvarint(m.Context); k > 0 && n <= uint64(len(m.Context)-k) {
					h.relayed(m.Context[k:k+int(n)], m.Context[k+int(n):])
				}
			}
			return
		}
		if n := h.group(m.To); n != nil {
			n.receive(m)
		}
	})
	if err != nil {
		return nil, err
	}
	for id, addr := range cfg.Nodes {
		if id != cfg.NodeID {
			h.tr.AddPeer(id, addr)
		}
	}
	go h.tell()
	return h, nil
}

// tell sends the groups this node leads, with their terms, to every other
// node, every newsEvery: none is news too, that the node is up.
func (h *Host) tell() {
	defer close(h.done)
	t := time.NewTicker(newsEvery)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		var news []byte
		for _, n := range h.all() {
			if term := n.s.leadTerm.Load(); term != 0 {
				news = binary.BigEndian.AppendUint32(news, transport.GroupOf(n.s.cfg.ID))
				news = binary.BigEndian.AppendUint64(news, term)
			}
		}
		msgs := make([]raftpb.Message, 0, len(h.nodes))
		for id := range h.nodes {
			if id != h.me {
				msgs = append(msgs, raftpb.Message{Type: raftpb.MsgHeartbeat, Context: news,
					From: transport.ReplicaID(newsGroup, h.me), To: transport.ReplicaID(newsGroup, id)})
			}
		}
		h.tr.Send(msgs)
	}
}

// Relay sends a pub/sub message to nodes, whose subscribers get it
// (HostConfig.Relayed) as soon as it comes: as on Redis Cluster's bus, a
// message is not kept for a node that is down.
func (h *Host) Relay(nodes []uint64, channel, message []byte) {
	body := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(channel)+len(message)), uint64(len(channel)))
	body = append(append(body, channel...), message...)
	msgs := make([]raftpb.Message, len(nodes))
	for i, id := range nodes {
		msgs[i] = raftpb.Message{Type: raftpb.MsgProp, Context: body,
			From: transport.ReplicaID(newsGroup, h.me), To: transport.ReplicaID(newsGroup, id)}
	}
	h.tr.Send(msgs)
}

// heard keeps node's news: for each group it leads, its term. News of a
// lower term than the one known is old: a deposed leader's, or late.
func (h *Host) heard(node uint64, news []byte) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastHeard[node] = now
	for ; len(news) >= 12; news = news[12:] {
		group, term := binary.BigEndian.Uint32(news), binary.BigEndian.Uint64(news[4:])
		if cur := h.news[group]; term > cur.term || term == cur.term && cur.node == node || now.Sub(cur.at) > newsFresh {
			h.news[group] = leaderNews{node: node, term: term, at: now}
		}
	}
}

// Up reports whether node's news came lately.
func (h *Host) Up(node uint64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return time.Since(h.lastHeard[node]) <= newsFresh
}

// LeaderOf is the node that leads group, as its own replica knows it if
// this node hosts the group, else as the latest fresh news says; 0 if none
// is known.
func (h *Host) LeaderOf(group uint32) uint64 {
	if n := h.group(transport.ReplicaID(group, h.me)); n != nil {
		return transport.NodeOf(n.s.Leader())
	}
	h.mu.RLock()
	news := h.news[group]
	h.mu.RUnlock()
	if news.node == 0 || time.Since(news.at) > newsFresh {
		return 0
	}
	return news.node
}

// Transport is the host's transport.
func (h *Host) Transport() *transport.Transport { return h.tr }

// ClientAddr is where node id serves clients, as it advertised it when it
// last dialed this node (zero if it has not).
func (h *Host) ClientAddr(id uint64) ClientAddr { return ParseClientAddr(h.tr.Advertised(id)) }

// Close stops the transport, once the shards are closed.
func (h *Host) Close() {
	close(h.stop)
	<-h.done
	h.tr.Stop()
}

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

// member reports whether node id is a node of the cluster, or a member
// of a group this node hosts.
func (h *Host) member(id uint64) bool {
	if _, ok := h.nodes[id]; ok {
		return true
	}
	for _, n := range h.all() {
		if n.member(transport.ReplicaID(transport.GroupOf(n.s.cfg.ID), id)) {
			return true
		}
	}
	return false
}
