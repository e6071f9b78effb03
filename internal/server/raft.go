package server

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/transport"
)

// Replication commands: RAFT (status and membership), READONLY/READWRITE,
// and the replication section of INFO.

func cmdReadonly(c *Client, argv [][]byte)  { c.readonly = true; c.reply().OK() }
func cmdReadwrite(c *Client, argv [][]byte) { c.readonly = false; c.reply().OK() }

// cmdRole is ROLE in Redis's shapes, with Raft indexes for replication
// offsets: a leader is ["master", applied index, [[host, port, match
// index] per member]], a follower ["slave", leader host, leader port,
// "connected" (or "connect" while it knows no leader), applied index]. A
// lone node is a master with no replicas and offset 0, as Redis alone.
func cmdRole(c *Client, argv [][]byte) {
	w := c.reply()
	sh := c.srv.group()
	if sh.Lone() {
		w.ArrayLen(3)
		w.BulkString("master")
		w.Int(0)
		w.ArrayLen(0)
		return
	}
	st := sh.Status()
	if st.Role == "leader" {
		var rows [][3]string
		for _, id := range append(st.Voters, st.Learners...) {
			pr, ok := st.Progress[id]
			if id == st.ID || !ok {
				continue
			}
			host, port, _ := net.SplitHostPort(st.Advertised[id])
			rows = append(rows, [3]string{host, port, strconv.FormatUint(pr.Match, 10)})
		}
		w.ArrayLen(3)
		w.BulkString("master")
		w.Int(int64(st.Applied))
		w.ArrayLen(len(rows))
		for _, r := range rows {
			w.BulkStrings(r[:])
		}
		return
	}
	host, port, _ := net.SplitHostPort(st.Advertised[st.Leader])
	p, _ := strconv.Atoi(port)
	state := "connected"
	if st.Leader == 0 {
		state = "connect"
	}
	w.ArrayLen(5)
	w.BulkString("slave")
	w.BulkString(host)
	w.Int(int64(p))
	w.BulkString(state)
	w.Int(int64(st.Applied))
}

// cmdWait is WAIT numreplicas timeout: how many other members of the group
// have the client's writes in their logs, waiting up to timeout ms (0:
// for ever) for numreplicas of them. An acknowledged write is already on a
// majority, so in a cluster of three WAIT 1 answers at once; a lone node
// has no replicas and answers 0, after the timeout if numreplicas > 0, as
// Redis without replicas does. The client's writes were all answered
// before this runs, so the applied index covers them. Inside EXEC it
// answers at once, as Redis does.
func cmdWait(c *Client, argv [][]byte) {
	w := c.reply()
	want, ok := num.ParseInt(argv[1])
	if !ok {
		w.Error(command.ErrNotInt)
		return
	}
	timeout, ok := waitTimeout(w, argv[2], false)
	if !ok {
		return
	}
	sh := c.wroteTo // in cluster mode, the shard of the client's last write
	if sh == nil {
		sh = c.srv.group()
	}
	index := sh.Applied()
	var n int
	if !c.awaitReplicas(sh, timeout, func() bool { n = sh.Replicas(index); return int64(n) >= want }) {
		return
	}
	w.Int(int64(n))
}

// cmdWaitaof is WAITAOF numlocal numreplicas timeout (Redis 7.2): [1 if
// this node's log holds the client's writes on disk (else 0), how many
// other members' logs hold them], waiting up to timeout ms (0: for ever)
// until at least numlocal and numreplicas do. basalt's log is its
// append-only file and is always on, so numlocal 1 is always allowed:
// with appendfsync always (the default) every acknowledged write is
// already synced, under everysec the next sync (within a second) covers
// it, and under no nothing tells when the OS wrote it, so numlocal 1 waits
// for its timeout as in Redis. A client that wrote nothing has nothing to
// wait for (Redis's offset 0). The replicas are counted as WAIT counts
// them, in the shard the client last wrote to. Inside EXEC it answers at
// once, as Redis does; through a follower the leader answers, which holds
// the client's writes (Redis's replicas refuse WAITAOF).
func cmdWaitaof(c *Client, argv [][]byte) {
	w := c.reply()
	local, ok := num.ParseInt(argv[1])
	switch {
	case !ok:
		w.Error(command.ErrNotInt)
		return
	case local < 0 || local > 1:
		w.Error("ERR value is out of range, value must between 0 and 1")
		return
	}
	want, ok := num.ParseInt(argv[2])
	switch {
	case !ok:
		w.Error(command.ErrNotInt)
		return
	case want < 0:
		w.Error("ERR value is out of range, must be positive")
		return
	}
	timeout, ok := waitTimeout(w, argv[3], true)
	if !ok {
		return
	}
	sh, index := c.wroteTo, uint64(0)
	if sh == nil {
		sh = c.srv.group()
	} else {
		index = sh.Applied()
	}
	var synced, n int64
	count := func() bool {
		synced, n = 0, int64(sh.Replicas(index))
		if sh.Synced(index) {
			synced = 1
		}
		return synced >= local && n >= want
	}
	if !c.awaitReplicas(sh, timeout, count) {
		return
	}
	w.ArrayLen(2)
	w.Int(synced)
	w.Int(n)
}

// What ended a waitUntil.
const (
	waitReady          = iota // ready said so
	waitTimedOut              // the timeout, or CLIENT UNBLOCK [TIMEOUT]
	waitUnblockedError        // CLIENT UNBLOCK ERROR
	waitGone                  // the client disconnected (c.closing is set)
	waitDemoted               // the node stopped leading the shard
)

// errDemoted ends a WAIT or WAITAOF on a node that stopped leading the
// shard meanwhile: it no longer learns the followers' progress, so the
// wait could only end with its timeout. Redis's words for a master that
// became a replica (which also closes the connection; basalt keeps it).
const errDemoted = "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"

// waitTimeout reads WAIT's and WAITAOF's timeout (ms), answering Redis
// 7.0's errors; Redis 7.2 also refuses, for WAITAOF only, a timeout whose
// deadline overflows (outOfRange).
func waitTimeout(w *resp.Writer, arg []byte, outOfRange bool) (int64, bool) {
	timeout, ok := num.ParseInt(arg)
	switch {
	case !ok:
		w.Error("ERR timeout is not an integer or out of range")
	case timeout < 0:
		w.Error("ERR timeout is negative")
	case outOfRange && timeout > math.MaxInt64-nowMs():
		w.Error("ERR timeout is out of range")
	default:
		return timeout, true
	}
	return 0, false
}

// awaitReplicas is WAIT's and WAITAOF's wait: none if ready() holds
// already, else waitUntil's. It reports false when the command is over (an
// error answered, or the client gone); after a timeout ready runs once
// more, so that what it counts is current.
func (c *Client) awaitReplicas(sh *shard.Shard, timeout int64, ready func() bool) bool {
	if ready() {
		return true
	}
	switch c.waitUntil(sh, timeout, ready) {
	case waitGone:
		return false
	case waitUnblockedError:
		c.reply().Error(errUnblocked)
		return false
	case waitDemoted:
		c.reply().Error(errDemoted)
		return false
	case waitTimedOut:
		ready()
	}
	return true
}

// waitUntil blocks the client in WAIT or WAITAOF until ready() holds, for
// up to timeout ms (0: for ever), or until this node stops leading sh if
// it led it. Inside EXEC it does not wait, as Redis does not. Other
// clients go on: each has its goroutine. The wait is polled: followers'
// progress reaches the leader with their append replies, a sync of the
// log happens on another goroutine, and a poll costs one call into the
// Raft loop.
func (c *Client) waitUntil(sh *shard.Shard, timeout int64, ready func() bool) int {
	if c.execing {
		return waitTimedOut
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(min(timeout, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond)
		defer t.Stop()
		expired = t.C
	}
	gone, stopWatching := c.watchDisconnect()
	defer stopWatching()
	unblocked := c.blockedUntilUnblock()
	defer c.blocked.Store(false)
	c.srv.replWaits.Add(1)
	defer c.srv.replWaits.Add(-1)
	led := sh.IsLeader()
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-poll.C:
			if ready() {
				return waitReady
			}
			if led && !sh.IsLeader() {
				return waitDemoted
			}
		case <-expired:
			return waitTimedOut
		case <-gone:
			c.closing = true
			return waitGone
		case asError := <-unblocked:
			if asError {
				return waitUnblockedError
			}
			return waitTimedOut
		}
	}
}

func cmdRaft(c *Client, argv [][]byte) {
	sub := strings.ToUpper(string(argv[1]))
	if sub == "PUBLISH" && len(argv) == 5 {
		// RAFT PUBLISH origin channel message: a node's client's PUBLISH,
		// sent to the leader (pubsub_cluster.go). Proposed without waiting
		// for this connection's writes before it, as PUBLISH is.
		c.publish(argv[3], argv[4], argv[2])
		return
	}
	w := c.reply()
	sh := c.srv.group()
	switch {
	case sub == "STATUS" && len(argv) == 2:
		st := sh.Status()
		lines := raftStatusLines(st)
		w.ArrayLen(len(lines))
		for _, l := range lines {
			w.Bulk([]byte(l))
		}
	case sub == "ADD" && (len(argv) == 4 || len(argv) == 5 && strings.EqualFold(string(argv[4]), "learner")):
		id, ok := num.ParseInt(argv[2])
		if !ok || id <= 0 {
			w.Error("ERR node ID must be a positive integer")
			return
		}
		if err := sh.AddMember(uint64(id), string(argv[3]), len(argv) == 5); err != nil {
			w.Error(shard.ErrorReply(err))
			return
		}
		w.OK()
	case sub == "REMOVE" && len(argv) == 3:
		id, ok := num.ParseInt(argv[2])
		if !ok || id <= 0 {
			w.Error("ERR node ID must be a positive integer")
			return
		}
		if err := sh.RemoveMember(uint64(id)); err != nil {
			w.Error(shard.ErrorReply(err))
			return
		}
		w.OK()
	case sub == "TRANSFER" && len(argv) == 2:
		if !sh.IsLeader() {
			w.Error(shard.ErrorReply(&shard.NotLeaderError{Leader: sh.Leader()}))
			return
		}
		sh.TransferLeadership(3 * time.Second)
		w.OK()
	case sub == "ISOLATE" && len(argv) == 3:
		// Fault injection for tests: drop all Raft traffic to and from
		// every peer, as a network partition would.
		tr := sh.Transport()
		if tr == nil {
			w.Error("ERR this node has no peers")
			return
		}
		on := strings.EqualFold(string(argv[2]), "on")
		st := sh.Status()
		for _, id := range append(append(st.Voters, st.Learners...), peerIDs(st.Peers)...) {
			if id != sh.ID() {
				tr.SetFault(id, on, on)
			}
		}
		w.OK()
	default:
		w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try RAFT STATUS, ADD, REMOVE, TRANSFER or ISOLATE.")
	}
}

// raftStatusLines is RAFT STATUS: "name:value" lines, one per peer with
// its replication progress on the leader.
func raftStatusLines(st shard.Status) []string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	lines := []string{
		"node_id:" + u(st.ID),
		"role:" + st.Role,
		"leader_id:" + u(st.Leader),
		"term:" + u(st.Term),
		"commit_index:" + u(st.Commit),
		"applied_index:" + u(st.Applied),
		"log_first_index:" + u(st.FirstIndex),
		"log_last_index:" + u(st.LastIndex),
		"voters:" + joinIDs(st.Voters),
		"learners:" + joinIDs(st.Learners),
	}
	for _, id := range append(append([]uint64(nil), st.Voters...), st.Learners...) {
		l := "node_" + u(id) + ":raft_addr=" + st.Peers[id] + ",client_addr=" + st.Advertised[id]
		if pr, ok := st.Progress[id]; ok {
			l += ",match=" + u(pr.Match) + ",next=" + u(pr.Next) + ",state=" + strings.TrimPrefix(strings.ToLower(pr.State.String()), "state")
		}
		lines = append(lines, l)
	}
	return lines
}

func joinIDs(ids []uint64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(id, 10)
	}
	return strings.Join(s, ",")
}

// debugDigest is DEBUG DIGEST: a hash of all of the node's data, equal on
// replicas that applied the same log.
// In cluster mode it hashes the shards' digests, in shard order.
func debugDigest(c *Client) {
	h := sha256.New()
	var d [32]byte
	for _, sh := range c.srv.shards {
		var err error
		if d, err = sh.Store().Digest(); err != nil {
			c.reply().Error("ERR " + err.Error())
			return
		}
		h.Write(d[:])
	}
	if c.srv.clustered() {
		copy(d[:], h.Sum(nil))
	}
	c.reply().Simple(hex.EncodeToString(d[:]))
}

func peerIDs(m map[uint64]string) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}

// checkRaftTrust refuses, as Redis's protected mode refuses clients, a Raft
// port beyond loopback that anyone who reaches it could join: without a
// cluster secret the handshake authenticates no one. On loopback only
// local processes reach it, and a warning says so.
func checkRaftTrust(cfg Config) error {
	if cfg.RaftAddr == "" || cfg.ClusterSecret != "" || cfg.TLSCluster {
		return nil
	}
	if !isLoopback(cfg.RaftAddr) {
		return fmt.Errorf("--raft-addr %s is not a loopback address and no cluster secret is set: anyone who reaches the port could join the cluster, forge its log or stop its writes. Set cluster-secret (or cluster-secret-file) to the same secret, of at least %d characters, on every node, or tls-cluster yes with certificates", cfg.RaftAddr, minSecret)
	}
	slog.Warn("raft: no cluster secret; the Raft port trusts every process on this host (set cluster-secret)", "raft_addr", cfg.RaftAddr)
	return nil
}

// isLoopback reports whether a listen address binds loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// clusterID names the cluster an --initial-cluster bootstraps: every
// member computes the same one, and a data directory keeps it (see
// shard's identity). 0 (none) for a node that joins.
func clusterID(cfg Config) uint64 {
	if cfg.Join || len(cfg.InitialCluster) == 0 {
		return 0
	}
	sum := sha256.Sum256([]byte("basalt cluster\x00" + FormatCluster(cfg.InitialCluster)))
	return max(binary.BigEndian.Uint64(sum[:]), 1)
}

// raftTLS builds the Raft transport's TLS configurations when tls-cluster
// (or tls-replication) is yes, on the node's certificates (tls.go).
func raftTLS(cfg Config, t *serverTLS) (server, client *tls.Config) {
	if !cfg.TLSCluster {
		return nil, nil
	}
	return transport.MutualTLS(t.certs)
}
