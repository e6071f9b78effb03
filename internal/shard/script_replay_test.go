package shard_test

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/shard"
)

// TestScriptReplay runs scripts that use math.random, TIME, SPOP and
// tostring of a table through a live shard, then replays the log on an
// empty store: the scripts see the record's seed and clock, so both stores
// are the same.
func TestScriptReplay(t *testing.T) {
	const body = `
local t = redis.call('TIME')
redis.call('SET', KEYS[1], t[1] .. ':' .. t[2] .. ':' .. math.random(1000000))
redis.call('SADD', KEYS[2], math.random(100), math.random(100), math.random(100))
redis.call('SPOP', KEYS[2])
redis.call('HSET', KEYS[3], tostring(math.random()), ARGV[1])
redis.call('SET', KEYS[1] .. ':t', tostring({}) .. tostring(pcall) .. collectgarbage('count'))
if math.random() < 0.2 then redis.call('DEL', KEYS[1]) end
return redis.call('SCARD', KEYS[2])`
	st, sh, raftDir := startLone(t)
	var err error
	var props []*shard.Proposal
	for i := range 300 {
		k := strconv.Itoa(i % 7)
		argv := argv("eval", []string{body, "3", "s" + k, "set" + k, "h" + k, strconv.Itoa(i)})
		p := shard.NewProposal(shard.Record{Kind: shard.KindCommand, DB: i % 2, Cmds: [][][]byte{argv}}, 2)
		if err := sh.Propose(p); err != nil {
			t.Fatal(err)
		}
		props = append(props, p)
		if i%30 == 0 { // now and then, let the clock move
			waitAll(t, props)
			props = props[:0]
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitAll(t, props)
	sh.Close()

	var recs []*shard.Record
	err = shard.ReadLog(raftDir, func(rec *shard.Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, st, recs)
	if liveKeys(st) == 0 {
		t.Fatal("the scripts left no keys")
	}
}

func waitAll(t *testing.T, props []*shard.Proposal) {
	for _, p := range props {
		<-p.Done
		if r := string(p.W.Bytes()); r[0] != ':' {
			t.Fatalf("script reply %q", r)
		}
	}
}
