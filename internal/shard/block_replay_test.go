package shard_test

import (
	"testing"
	"time"

	"basalt/internal/shard"
)

// A blocked pop woken while one of its keys holds another type waits on,
// and is served from a key of its type, as Redis serves blocked clients;
// the retry is logged naming only that key, so replaying the log changes
// the same data (the call itself, on any key of another type, answers
// WRONGTYPE).
func TestBlockedPopReplay(t *testing.T) {
	st, sh, raftDir := startLone(t)
	propose := func(block bool, args ...string) *shard.Proposal {
		p := shard.NewProposal(shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{argv(args[0], args[1:])}}, 2)
		p.Run.Block = block
		if err := sh.Propose(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	reply := func(p *shard.Proposal, what string) string {
		t.Helper()
		select {
		case <-p.Done:
			return string(p.W.Bytes())
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no reply", what)
			return ""
		}
	}
	for _, c := range []struct{ push, pop []string }{
		{[]string{"rpush", "l2", "v"}, []string{"blpop", "l1", "l2", "0"}},
		{[]string{"rpush", "l2", "v"}, []string{"blmpop", "0", "2", "l1", "l2", "LEFT"}},
		{[]string{"zadd", "l2", "1", "m"}, []string{"bzpopmin", "l1", "l2", "0"}},
		{[]string{"zadd", "l2", "1", "m"}, []string{"bzmpop", "0", "2", "l1", "l2", "MIN"}},
	} {
		reply(propose(false, "del", "l1", "l2"), "DEL")
		blocked := propose(true, c.pop...)
		reply(propose(false, "set", "l1", "string"), "SET") // wakes it: l1 is no list
		reply(propose(false, c.push...), c.push[0])
		got := reply(blocked, c.pop[0])
		if got == "" || got[0] == '-' {
			t.Fatalf("%s: %q", c.pop[0], got)
		}
	}
	sh.Close()
	var recs []*shard.Record
	if err := shard.ReadLog(raftDir, func(rec *shard.Record) error {
		recs = append(recs, rec)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkReplay(t, st, recs)
}
