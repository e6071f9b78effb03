package command

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// TestKillCtxRuns checks the reusable kill context: a kill reaches only
// the run it was meant for, and the next run starts with a fresh channel.
func TestKillCtxRuns(t *testing.T) {
	k := newKillCtx()
	first := k.begin()
	k.end()
	second := k.begin()
	k.cancel(first) // late: the first run has ended
	select {
	case <-k.Done():
		t.Fatal("a kill of an ended run stopped the next one")
	default:
	}
	if k.Err() != nil {
		t.Fatal("Err set without a kill")
	}
	k.cancel(second)
	select {
	case <-k.Done():
	default:
		t.Fatal("the kill did not close Done")
	}
	if k.Err() != context.Canceled {
		t.Fatalf("Err = %v", k.Err())
	}
	k.end()
	k.begin()
	select {
	case <-k.Done():
		t.Fatal("the run after a kill starts killed")
	default:
	}
}

// applyEval applies EVAL body in a write Tx as the leader does for a
// client (a live, killable run) and returns the reply.
func applyEval(tx *store.Tx, body string) string {
	w := resp.NewWriter(2)
	rec := &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{{[]byte("eval"), []byte(body), []byte("0")}}}
	Apply(tx, rec, nil, nil, w)
	return string(w.Buf)
}

// TestKillCoroutine kills a script looping inside a coroutine (which runs
// under a context derived from the run's), then runs scripts on the same
// environments, some leaving a coroutine suspended: those must not leave
// goroutines behind.
func TestKillCoroutine(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	SetScriptTimeLimit(20)
	defer SetScriptTimeLimit(5000)
	tx := st.WriteTx()
	defer tx.Close()
	tx.Now = 1

	done := make(chan string)
	go func() {
		done <- applyEval(tx, `local co = coroutine.create(function() local i = 0 while true do i = i + 1 end end)
local ok = coroutine.resume(co)
return ok`)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for KillScript() != "" {
		if time.Now().After(deadline) {
			t.Fatal("the script could not be killed")
		}
		time.Sleep(time.Millisecond)
	}
	// The coroutine stops with an error that resume returns, and the
	// script at its next instruction.
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "-"+errKilled+" script: ") {
			t.Fatalf("killed script replied %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the killed script did not stop")
	}

	before := runtime.NumGoroutine()
	for range 50 {
		got := applyEval(tx, `local co = coroutine.create(function() coroutine.yield(1) return 2 end)
local _, v = coroutine.resume(co)
return v`)
		if got != ":1\r\n" {
			t.Fatalf("reply %q", got)
		}
	}
	if after := runtime.NumGoroutine(); after > before+5 {
		t.Fatalf("%d goroutines before, %d after scripts leaving coroutines suspended", before, after)
	}
	if got := applyEval(tx, `return 'ok'`); !strings.Contains(got, "ok") {
		t.Fatalf("reply %q", got)
	}
}
