package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"basalt/internal/clock"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Record time and clock offsets.
//
// A record carries its leader's clock, never going backwards from the last
// record applied (Shard.clock). So that this time stays near real time
// across failovers, a member of a replicated group leads only while
//
//   - its clock agrees within maxClockOffset (cluster-max-clock-offset)
//     with a majority of the nodes it knows, itself included, as the
//     transport measures them (transport.CheckClock), and
//   - the last record time it applied is not ahead of its clock by more
//     than maxClockOffset (a leader whose clock was ahead, within the bound,
//     handed over to one behind): it waits for its clock to catch up.
//
// Between two checks, record time goes no further than bound past the
// time the last check saw, carried forward by the monotonic clock: a
// leader's clock that jumps ahead stamps no record far into the future
// before the next check finds it out (and then it hands over).
//
// Otherwise it does not campaign (its pre-votes are not sent, and a
// leadership transfer to it is ignored), refuses writes if it leads
// (TRYAGAIN) and hands leadership to a follower, and says why in the log
// and in INFO. A lone node has no one to compare with and always leads.

const (
	clockCheckTicks = 5               // how often, in raft ticks, a node checks its clock
	clockLogAfter   = 2 * time.Second // how long a refusal lasts before it is logged
)

var maxClockOffset atomic.Int64 // nanoseconds; 0 turns the check off

func init() { maxClockOffset.Store(int64(500 * time.Millisecond)) }

// SetMaxClockOffset sets the bound (cluster-max-clock-offset); 0 turns the
// clock check off.
func SetMaxClockOffset(d time.Duration) { maxClockOffset.Store(int64(d)) }

// ErrClockOffset refuses a write on a leader whose clock is off.
var ErrClockOffset = errors.New("TRYAGAIN this node's clock is off from its peers' or the log's time: it is handing leadership over")

// ClockRefusal says why this node does not lead now for its clock ("" if
// it may lead).
func (s *Shard) ClockRefusal() string {
	if p := s.clockRefusal.Load(); p != nil {
		return *p
	}
	return ""
}

// ClockOffsets are the peers' clocks as this node measures them (nil for a
// node without peers).
func (s *Shard) ClockOffsets() map[uint64]transport.ClockOffset {
	if s.node.tr == nil {
		return nil
	}
	return s.node.tr.ClockOffsets()
}

// checkClock decides whether this node may lead for its clock, and if it
// leads and may not, hands leadership to a follower. A
// refusal is logged once it has lasted clockLogAfter: a node starting
// refuses until it has measured its peers, and says nothing about it.
func (n *node) checkClock() {
	err := n.clockError()
	if err == nil {
		n.s.clockAnchor.Store(&clockAnchor{wall: clock.UnixMilli(), mono: time.Now()})
		if n.s.clockRefusal.Swap(nil) != nil && n.clockLogged {
			slog.Info("raft: this node's clock agrees with its peers again; it may lead", "node", n.s.cfg.ID)
		}
		n.clockLogged = false
		return
	}
	why := err.Error()
	if n.s.clockRefusal.Swap(&why) == nil {
		n.clockSince = time.Now()
	}
	if time.Since(n.clockSince) >= clockLogAfter {
		if missed, ok := n.s.clockLog.Allow(); ok {
			slog.Warn("raft: this node does not lead: "+why, "node", n.s.cfg.ID, "bound", time.Duration(maxClockOffset.Load()), "lines_left_out", missed)
			n.clockLogged = true
		}
	}
	rs := n.rn.Status()
	if rs.RaftState != raft.StateLeader || rs.LeadTransferee != 0 {
		return
	}
	// Each try goes to the next active follower in turn: one that refuses
	// to lead too (its clock is off as well) ignores the transfer, which
	// raft gives up after an election timeout.
	var ids []uint64
	for id, pr := range rs.Progress {
		if id != rs.ID && !pr.IsLearner && pr.RecentActive {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	i, _ := slices.BinarySearch(ids, n.clockTried+1)
	n.clockTried = ids[i%len(ids)]
	n.rn.TransferLeader(n.clockTried)
}

// clockError says why this node may not lead now, or nil.
func (n *node) clockError() error {
	bound := time.Duration(maxClockOffset.Load())
	if n.tr == nil || bound == 0 || n.loneFast.Load() {
		return nil
	}
	if err := n.tr.CheckClock(bound); err != nil {
		return err
	}
	if ahead := time.Duration(n.s.lastTimeSeen.Load()-clock.UnixMilli()) * time.Millisecond; ahead > bound {
		return fmt.Errorf("the last record's time is %s ahead of this node's clock, more than %s: it waits for its clock to catch up", ahead, bound)
	}
	return nil
}

// clockAnchor is the clock as the last check that let the node lead saw
// it.
type clockAnchor struct {
	wall int64     // unix ms
	mono time.Time // when, on the monotonic clock
}

// recordTime is the wall clock, unless it ran ahead, since the last check,
// of what the monotonic clock says by more than the bound.
func (s *Shard) recordTime() int64 {
	now := clock.UnixMilli()
	if a := s.clockAnchor.Load(); a != nil {
		if bound := maxClockOffset.Load(); bound > 0 {
			now = min(now, a.wall+time.Since(a.mono).Milliseconds()+bound/int64(time.Millisecond))
		}
	}
	return now
}

// mayLead reports whether the last clock check let this node lead.
func (s *Shard) mayLead() bool { return s.clockRefusal.Load() == nil }

// step passes a message to raft, except a leadership transfer to this
// node while its clock keeps it from leading.
func (n *node) step(m raftpb.Message) {
	if m.Type == raftpb.MsgTimeoutNow && !n.s.mayLead() {
		return
	}
	n.rn.Step(m)
}

// withoutCampaign drops this node's pre-votes while it may not lead.
func (n *node) withoutCampaign(msgs []raftpb.Message) []raftpb.Message {
	if n.s.mayLead() {
		return msgs
	}
	kept := make([]raftpb.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Type != raftpb.MsgPreVote {
			kept = append(kept, m)
		}
	}
	return kept
}
