package shard_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"basalt/internal/command"
	"basalt/internal/shard"
)

// runaway is a script that would run for minutes; the tests kill it.
const runaway = `local i = 0 while i < 1e9 do i = i + 1 end return i`

// TestScriptKillNotLogged kills scripts in the apply loop, one inside an
// EXEC and one alone, while a write waits behind each, and checks that the
// log never holds a killed script: replaying it gives the same store, the
// EXEC's other commands applied, and the withdrawn writes nowhere.
func TestScriptKillNotLogged(t *testing.T) {
	command.SetScriptTimeLimit(50)
	defer command.SetScriptTimeLimit(5000)
	st, sh, raftDir := startLone(t)
	var err error
	propose := func(kind shard.Kind, cmds ...[][]byte) *shard.Proposal {
		p := shard.NewProposal(shard.Record{Kind: kind, Cmds: cmds}, 2)
		if err := sh.Propose(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// killBusy waits for the script to pass the limit, withdraws the write
	// queued behind it and kills the script.
	killBusy := func(behind *shard.Proposal) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !command.ScriptBusy(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the script never made the shard busy")
			}
		}
		if !behind.Withdraw() {
			t.Fatal("the write behind the script could not be withdrawn")
		}
		if msg := command.KillScript(); msg != "" {
			t.Fatalf("SCRIPT KILL: %s", msg)
		}
	}
	wait := func(p *shard.Proposal, want string) {
		t.Helper()
		select {
		case <-p.Done:
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
		}
		if got := string(p.W.Bytes()); !strings.HasPrefix(got, want) {
			t.Fatalf("reply %q, want %q...", got, want)
		}
	}

	exec := propose(shard.KindExec, argv("set", []string{"a", "1"}), argv("eval", []string{runaway, "1", "k"}), argv("set", []string{"b", "2"}))
	behind := propose(shard.KindCommand, argv("set", []string{"c", "3"}))
	killBusy(behind)
	wait(exec, "*3\r\n+OK\r\n-ERR Script killed by user with SCRIPT KILL... script: ")
	if !strings.HasSuffix(string(exec.W.Bytes()), ", on @user_script:1.\r\n+OK\r\n") {
		t.Fatalf("EXEC reply %q", exec.W.Bytes())
	}

	eval := propose(shard.KindCommand, argv("eval", []string{runaway, "0"}))
	behind = propose(shard.KindCommand, argv("set", []string{"c", "4"}))
	killBusy(behind)
	wait(eval, "-ERR Script killed by user with SCRIPT KILL...")
	wait(propose(shard.KindCommand, argv("set", []string{"d", "5"})), "+OK")
	if command.ScriptBusy() || command.KillScript() != "NOTBUSY No scripts in execution right now." {
		t.Fatal("still busy after the script ended")
	}
	sh.Close()

	var recs []*shard.Record
	err = shard.ReadLog(raftDir, func(rec *shard.Record) error {
		for _, cmd := range rec.Cmds {
			if bytes.Contains(bytes.Join(cmd, []byte(" ")), []byte("1e9")) {
				t.Errorf("the log holds a killed script: %q", cmd)
			}
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 { // the EXEC and SET d
		t.Errorf("%d records logged, want 2", len(recs))
	}
	checkReplay(t, st, recs)
	if n := liveKeys(st); n != 3 { // a, b and d; never c
		t.Fatalf("%d keys, want 3", n)
	}
}
