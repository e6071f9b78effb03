package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

func open(t *testing.T, dir string) *Storage {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func marshal(t *testing.T, m interface{ Marshal() ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameEntries(a, b []raftpb.Entry) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d entries, want %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Index != y.Index || x.Term != y.Term || x.Type != y.Type || !bytes.Equal(x.Data, y.Data) {
			return fmt.Errorf("entry %d: %+v, want %+v", i, x, y)
		}
	}
	return nil
}

// compare checks every query answers the same on s and the model m.
func compare(t *testing.T, rng *rand.Rand, s *Storage, m *raft.MemoryStorage) {
	t.Helper()
	hs, cs, err := s.InitialState()
	mhs, mcs, merr := m.InitialState()
	if err != nil || merr != nil {
		t.Fatalf("InitialState: %v / %v", err, merr)
	}
	if !bytes.Equal(marshal(t, &hs), marshal(t, &mhs)) || !bytes.Equal(marshal(t, &cs), marshal(t, &mcs)) {
		t.Fatalf("InitialState: %+v %+v, want %+v %+v", hs, cs, mhs, mcs)
	}
	first, _ := s.FirstIndex()
	mfirst, _ := m.FirstIndex()
	last, _ := s.LastIndex()
	mlast, _ := m.LastIndex()
	if first != mfirst || last != mlast {
		t.Fatalf("first, last = %d, %d; want %d, %d", first, last, mfirst, mlast)
	}
	snap, _ := s.Snapshot()
	msnap, _ := m.Snapshot()
	if !bytes.Equal(marshal(t, &snap.Metadata), marshal(t, &msnap.Metadata)) || !bytes.Equal(snap.Data, msnap.Data) {
		t.Fatalf("Snapshot %+v, want %+v", snap, msnap)
	}
	lo := uint64(0)
	if first > 2 {
		lo = first - 3
	}
	for i := lo; i <= last+2; i++ {
		term, err := s.Term(i)
		mterm, merr := m.Term(i)
		if term != mterm || err != merr {
			t.Fatalf("Term(%d) = %d, %v; want %d, %v", i, term, err, mterm, merr)
		}
	}
	// RetainFrom against the sizes of the model's entries.
	if last >= first {
		all, _ := m.Entries(first, last+1, math.MaxUint64)
		for _, keep := range []uint64{0, 40, 150, rng.Uint64N(400), math.MaxUint64} {
			want := last
			for held := uint64(0); want >= first && held+uint64(all[want-first].Size()) <= keep; want-- {
				held += uint64(all[want-first].Size())
			}
			if got := s.RetainFrom(last, keep); got != want {
				t.Fatalf("RetainFrom(%d, %d) = %d, want %d", last, keep, got, want)
			}
		}
	}
	sizes := []uint64{0, 1, 30, 100, 300, math.MaxUint64}
	for range 6 {
		lo := first - 1 + rng.Uint64N(last-first+3)
		hi := lo + rng.Uint64N(last+2-lo)
		if lo > last+1 {
			lo, hi = last+1, last+1
		}
		max := sizes[rng.IntN(len(sizes))]
		ents, err := s.Entries(lo, hi, max)
		ments, merr := m.Entries(lo, hi, max)
		if err != merr {
			t.Fatalf("Entries(%d, %d, %d) error %v, want %v", lo, hi, max, err, merr)
		}
		if err := sameEntries(ents, ments); err != nil {
			t.Fatalf("Entries(%d, %d, %d): %v", lo, hi, max, err)
		}
	}
}

type gen struct {
	rng  *rand.Rand
	term uint64
}

func (g *gen) entries(s *Storage) []raftpb.Entry {
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	from := first
	if from > 3 {
		from -= 3
	}
	at := from + g.rng.Uint64N(last+2-from)
	if g.rng.IntN(4) == 0 {
		g.term++
	}
	ents := make([]raftpb.Entry, g.rng.IntN(9))
	for k := range ents {
		if g.rng.IntN(6) == 0 {
			g.term++
		}
		e := raftpb.Entry{Index: at + uint64(k), Term: g.term, Type: raftpb.EntryType(g.rng.IntN(2))}
		if n := g.rng.IntN(60); n > 0 {
			e.Data = make([]byte, n)
			for i := range e.Data {
				e.Data[i] = byte(g.rng.Uint32())
			}
		}
		ents[k] = e
	}
	return ents
}

func (g *gen) hardState() raftpb.HardState {
	return raftpb.HardState{Term: g.term, Vote: g.rng.Uint64N(4), Commit: g.rng.Uint64N(50)}
}

func (g *gen) confState() raftpb.ConfState {
	var cs raftpb.ConfState
	for id := uint64(1); id <= 5; id++ {
		switch g.rng.IntN(3) {
		case 0:
			cs.Voters = append(cs.Voters, id)
		case 1:
			cs.Learners = append(cs.Learners, id)
		}
	}
	return cs
}

// TestDifferential runs the same random operations on a Storage and on
// raft.MemoryStorage and compares every query after each one, reopening
// the Storage now and then to check it reloads the same state. Odd seeds
// run one log with an engine of its own; even seeds run two logs in one
// shared engine, their operations interleaved, each against its own
// MemoryStorage, so that one group's truncations and snapshots that
// touched the other's keys would show.
func TestDifferential(t *testing.T) {
	defer func(n uint64) { recentBytes = n }(recentBytes)
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// Half the runs keep only a few entries in memory, so that
			// Entries reads both memory and Pebble.
			recentBytes = 8 << 20
			if seed%4 >= 2 {
				recentBytes = 200
			}
			rng := rand.New(rand.NewPCG(seed, 42))
			dir := t.TempDir()
			shared := seed%2 == 0
			var eng *Engine
			var pairs []*logPair
			reopen := func() {
				for _, p := range pairs {
					if err := p.s.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if eng != nil {
					if err := eng.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if !shared {
					if len(pairs) == 0 {
						pairs = []*logPair{{m: raft.NewMemoryStorage(), g: &gen{rng: rng, term: 1}}}
					}
					pairs[0].s = open(t, dir)
					return
				}
				var err error
				if eng, err = OpenEngine(dir); err != nil {
					t.Fatal(err)
				}
				if len(pairs) == 0 {
					pairs = []*logPair{{m: raft.NewMemoryStorage(), g: &gen{rng: rng, term: 1}}, {m: raft.NewMemoryStorage(), g: &gen{rng: rng, term: 1}}}
				}
				for i, p := range pairs {
					if p.s, err = eng.Open(uint64(7 + i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			reopen()
			defer func() {
				for _, p := range pairs {
					p.s.Close()
				}
				if eng != nil {
					eng.Close()
				}
			}()
			for op := range 600 {
				p := pairs[rng.IntN(len(pairs))]
				what, err, merr := "reopen", error(nil), error(nil)
				if rng.IntN(100) < 95 {
					what, err, merr = p.step(t, rng, op)
				} else {
					reopen()
				}
				if err != merr {
					t.Fatalf("op %d %s: error %v, want %v", op, what, err, merr)
				}
				for _, q := range pairs {
					compare(t, rng, q.s, q.m)
				}
			}
		})
	}
}

// logPair is a Storage and the MemoryStorage it is held to.
type logPair struct {
	s *Storage
	m *raft.MemoryStorage
	g *gen
}

// step runs one random operation on both.
func (p *logPair) step(t *testing.T, rng *rand.Rand, op int) (what string, err, merr error) {
	s, m := p.s, p.m
	first, _ := m.FirstIndex()
	last, _ := m.LastIndex()
	snap, _ := m.Snapshot()
	switch r := rng.IntN(95); {
	case r < 35:
		what = "Append"
		ents := p.g.entries(s)
		err, merr = s.Append(ents), m.Append(ents)
	case r < 60:
		what = "Save"
		ents := p.g.entries(s)
		hs := raftpb.HardState{}
		if rng.IntN(3) > 0 {
			hs = p.g.hardState()
		}
		err = s.Save(raftpb.Snapshot{}, hs, ents, rng.IntN(2) == 0)
		merr = m.Append(ents)
		if !raft.IsEmptyHardState(hs) {
			m.SetHardState(hs)
		}
	case r < 70:
		what = "SetHardState"
		hs := p.g.hardState()
		err, merr = s.SetHardState(hs), m.SetHardState(hs)
	case r < 80:
		what = "Compact"
		i := first - 1 + rng.Uint64N(last-first+2)
		if i > 0 && rng.IntN(3) == 0 {
			i-- // sometimes at or below the compaction point
		}
		err, merr = s.Compact(i), m.Compact(i)
	case r < 88:
		what = "CreateSnapshot"
		i := first - 1 + rng.Uint64N(last-first+2)
		var cs *raftpb.ConfState
		if rng.IntN(2) == 0 {
			c := p.g.confState()
			cs = &c
		}
		data := []byte(fmt.Sprint("snap", op))
		var got, want raftpb.Snapshot
		got, err = s.CreateSnapshot(i, cs, data)
		want, merr = m.CreateSnapshot(i, cs, data)
		if !bytes.Equal(marshal(t, &got), marshal(t, &want)) {
			t.Fatalf("op %d: CreateSnapshot(%d) = %+v, want %+v", op, i, got, want)
		}
	case r < 95:
		what = "ApplySnapshot"
		sn := raftpb.Snapshot{Data: []byte{byte(op)}}
		sn.Metadata.Index = snap.Metadata.Index + rng.Uint64N(last+8) - 2
		if sn.Metadata.Index > math.MaxUint64-10 {
			sn.Metadata.Index = 0
		}
		p.g.term += rng.Uint64N(2)
		sn.Metadata.Term = p.g.term
		sn.Metadata.ConfState = p.g.confState()
		if rng.IntN(2) == 0 {
			err, merr = s.ApplySnapshot(sn), m.ApplySnapshot(sn)
		} else {
			// As a Ready carrying a snapshot, entries after it and a hard state.
			p.g.term++
			ents := []raftpb.Entry{{Index: sn.Metadata.Index + 1, Term: p.g.term}}
			hs := p.g.hardState()
			err = s.SaveReady(raft.Ready{Snapshot: sn, Entries: ents, HardState: hs, MustSync: true})
			if raft.IsEmptySnap(sn) {
				merr = nil // SaveReady ignores an empty snapshot, not the entries
			} else {
				merr = m.ApplySnapshot(sn)
			}
			if merr == nil {
				m.Append(ents)
				m.SetHardState(hs)
			}
		}
	}
	return what, err, merr
}

// TestRestart writes a log the way a Ready loop does, closes it and checks
// a reopened Storage answers the same.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Bootstrap([]uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.Bootstrap([]uint64{1}); err == nil {
		t.Fatal("second Bootstrap succeeded")
	}
	m := raft.NewMemoryStorage()
	snap, _ := s.Snapshot()
	m.ApplySnapshot(snap)
	hs, _, _ := s.InitialState()
	m.SetHardState(hs)
	for i := uint64(2); i < 200; i += 10 {
		var ents []raftpb.Entry
		for j := i; j < i+10; j++ {
			ents = append(ents, raftpb.Entry{Index: j, Term: 1 + j/50, Data: []byte(fmt.Sprint("v", j))})
		}
		hs := raftpb.HardState{Term: 1 + i/50, Vote: 2, Commit: i}
		if err := s.Save(raftpb.Snapshot{}, hs, ents, true); err != nil {
			t.Fatal(err)
		}
		m.Append(ents)
		m.SetHardState(hs)
	}
	// A conflicting suffix from a new leader replaces entries 150..199.
	conflict := []raftpb.Entry{{Index: 150, Term: 9}, {Index: 151, Term: 9}}
	if err := s.Save(raftpb.Snapshot{}, raftpb.HardState{Term: 9, Commit: 140}, conflict, true); err != nil {
		t.Fatal(err)
	}
	m.Append(conflict)
	m.SetHardState(raftpb.HardState{Term: 9, Commit: 140})
	cs := raftpb.ConfState{Voters: []uint64{1, 2, 3}}
	if _, err := s.CreateSnapshot(100, &cs, []byte("checkpoint")); err != nil {
		t.Fatal(err)
	}
	m.CreateSnapshot(100, &cs, []byte("checkpoint"))
	if err := s.Compact(90); err != nil {
		t.Fatal(err)
	}
	m.Compact(90)

	rng := rand.New(rand.NewPCG(1, 2))
	compare(t, rng, s, m)
	for range 3 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, dir)
		compare(t, rng, s, m)
	}
	if last, _ := s.LastIndex(); last != 151 {
		t.Fatalf("LastIndex %d, want 151", last)
	}
	if first, _ := s.FirstIndex(); first != 91 {
		t.Fatalf("FirstIndex %d, want 91", first)
	}
	s.Close()
}

// TestQueriesFromMemory checks Term, FirstIndex and LastIndex are answered
// without Pebble: they still work once the database is closed.
func TestQueriesFromMemory(t *testing.T) {
	s := open(t, t.TempDir())
	var ents []raftpb.Entry
	for i := uint64(1); i <= 1000; i++ {
		ents = append(ents, raftpb.Entry{Index: i, Term: 1 + i/100})
	}
	if err := s.Save(raftpb.Snapshot{}, raftpb.HardState{Term: 11, Commit: 5}, ents, true); err != nil {
		t.Fatal(err)
	}
	if len(s.log.runs) != 12 { // the compaction point, then terms 1..11
		t.Fatalf("%d term runs, want 12", len(s.log.runs))
	}
	s.Close()
	for _, e := range ents {
		if term, err := s.Term(e.Index); err != nil || term != e.Term {
			t.Fatalf("Term(%d) = %d, %v", e.Index, term, err)
		}
	}
	if _, err := s.Term(1001); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("Term(1001): %v", err)
	}
	if last, _ := s.LastIndex(); last != 1000 {
		t.Fatal(last)
	}
}

// TestRawNodeRestart runs a single-voter RawNode on a Storage, commits
// proposals, and restarts it on the reopened log.
func TestRawNodeRestart(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Bootstrap([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	var applied []string
	run := func(s *Storage, propose int) {
		rn, err := raft.NewRawNode(&raft.Config{ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: s,
			MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := rn.Campaign(); err != nil {
			t.Fatal(err)
		}
		proposed := 0
		for steps := 0; steps < 1000; steps++ {
			for rn.HasReady() {
				rd := rn.Ready()
				if err := s.SaveReady(rd); err != nil {
					t.Fatal(err)
				}
				for _, e := range rd.CommittedEntries {
					if e.Type == raftpb.EntryNormal && len(e.Data) > 0 {
						applied = append(applied, string(e.Data))
					}
				}
				rn.Advance(rd)
			}
			if rn.BasicStatus().RaftState == raft.StateLeader && proposed < propose {
				rn.Propose([]byte(fmt.Sprint("p", len(applied), "-", proposed)))
				proposed++
			}
		}
		if proposed != propose {
			t.Fatalf("proposed %d of %d", proposed, propose)
		}
	}
	run(s, 20)
	if len(applied) != 20 {
		t.Fatalf("applied %d, want 20", len(applied))
	}
	s.Close()
	// Restarted with Applied 0, raft hands back every committed entry.
	s = open(t, dir)
	defer s.Close()
	before := applied
	applied = nil
	run(s, 5)
	if len(applied) != 25 {
		t.Fatalf("after restart applied %d, want 25", len(applied))
	}
	for i := range before {
		if applied[i] != before[i] {
			t.Fatalf("entry %d: %q, want %q", i, applied[i], before[i])
		}
	}
}

// discardLogger keeps raft's routine logging out of the test output.
func discardLogger() raft.Logger { return &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)} }

// A big entry leaves the cache of the newest entries once raft has handed
// it to be applied (it stayed live until later entries pushed it out);
// Entries still reads it, from Pebble.
func TestCommittedReleasesBig(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	ents := []raftpb.Entry{
		{Index: 1, Term: 1, Data: []byte("small")},
		{Index: 2, Term: 1, Data: bytes.Repeat([]byte("v"), 2*bigBatch)},
		{Index: 3, Term: 1, Data: []byte("small")},
	}
	if err := s.Save(raftpb.Snapshot{}, raftpb.HardState{Term: 1, Commit: 3}, ents, true); err != nil {
		t.Fatal(err)
	}
	s.Committed(1)
	if len(s.recent.ents) != 3 {
		t.Fatalf("%d entries cached after Committed(1), want 3", len(s.recent.ents))
	}
	s.Committed(3)
	if len(s.recent.ents) != 1 || s.recent.ents[0].Index != 3 || s.recent.bytes != uint64(ents[2].Size()) {
		t.Fatalf("cached after Committed(3): %d entries, %d bytes; want entry 3 only", len(s.recent.ents), s.recent.bytes)
	}
	got, err := s.Entries(1, 4, math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEntries(got, ents); err != nil {
		t.Fatal(err)
	}
}
