package server

import (
	"net"
	"strconv"
	"strings"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/shard"
)

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], with Redis 7.0's
// checks and errors, as a Raft leadership transfer: the leader hands over
// to the most up-to-date follower (or to the one TO names, by the client
// address it advertises), which has every committed write, so nothing is
// lost and FORCE changes nothing. It answers at once and the transfer
// runs in the background, as Redis's does.

// failoverWait is how long a transfer may take without TIMEOUT: Raft
// drops one that does not finish within an election timeout anyway.
const failoverWait = 5 * time.Second

func cmdFailover(c *Client, argv [][]byte) {
	w := c.reply()
	if c.srv.clustered() {
		w.Error("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
		return
	}
	if len(argv) == 2 && strings.EqualFold(string(argv[1]), "abort") {
		if !c.srv.failingOver.Load() {
			w.Error("ERR No failover in progress.")
			return
		}
		// Raft cannot call a transfer back; it ends (done or dropped)
		// within an election timeout.
		w.OK()
		return
	}
	var timeout int64
	var host string
	var port int64
	force := false
	for j := 1; j < len(argv); j++ {
		a := string(argv[j])
		switch {
		case strings.EqualFold(a, "timeout") && j+1 < len(argv) && timeout == 0:
			n, ok := num.ParseInt(argv[j+1])
			if !ok {
				w.Error(command.ErrNotInt)
				return
			}
			if n <= 0 {
				w.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case strings.EqualFold(a, "to") && j+2 < len(argv) && host == "":
			n, ok := num.ParseInt(argv[j+2])
			if !ok {
				w.Error(command.ErrNotInt)
				return
			}
			host, port = string(argv[j+1]), n
			j += 2
		case strings.EqualFold(a, "force") && !force:
			force = true
		default:
			w.Error(command.ErrSyntax)
			return
		}
	}
	sh := c.srv.group()
	st := sh.Status()
	switch {
	case c.srv.failingOver.Load():
		w.Error("ERR FAILOVER already in progress.")
		return
	case !sh.Lone() && st.Role != "leader":
		w.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	case sh.Lone() || len(st.Voters) < 2:
		w.Error("ERR FAILOVER requires connected replicas.")
		return
	case force && (timeout == 0 || host == ""):
		w.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	target := uint64(0)
	if host != "" {
		addr := net.JoinHostPort(host, strconv.FormatInt(port, 10))
		for _, id := range st.Voters {
			if id != st.ID && st.Advertised[id] == addr {
				target = id
			}
		}
		if target == 0 {
			w.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if !heardFrom(sh, target) {
			w.Error("ERR FAILOVER target replica is not online.")
			return
		}
	}
	wait := failoverWait
	if timeout > 0 {
		wait = time.Duration(timeout) * time.Millisecond
	}
	if !c.srv.failingOver.CompareAndSwap(false, true) {
		w.Error("ERR FAILOVER already in progress.")
		return
	}
	s := c.srv
	go func() {
		defer s.failingOver.Store(false)
		sh.TransferLeadershipTo(target, wait)
	}()
	w.OK()
}

// onlineWait is how long FAILOVER TO looks for a sign of life from its
// target: a few heartbeats.
const onlineWait = 500 * time.Millisecond

// heardFrom reports whether raft heard from replica id lately. Raft forgets
// whom it heard from at each quorum check, every election timeout, and
// hears a live replica again within a heartbeat, so one not heard from is
// looked at again for onlineWait.
func heardFrom(sh *shard.Shard, id uint64) bool {
	for deadline := time.Now().Add(onlineWait); ; time.Sleep(10 * time.Millisecond) {
		if pr, ok := sh.Status().Progress[id]; ok && pr.RecentActive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
