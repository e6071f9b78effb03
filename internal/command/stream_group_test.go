package command

import (
	"fmt"
	"strings"
	"testing"

	"basalt/internal/shard"
	"basalt/internal/store"
)

// A group record written before groups kept the bound of their pending
// IDs (40 bytes) still finds its pending entries: XREADGROUP after XGROUP
// SETID hands an entry pending with one consumer to another, and the
// group's next save stores the bounds found.
func TestGroupRecordWithoutPelMax(t *testing.T) {
	cmds := func(lines ...[]string) []*shard.Record {
		var recs []*shard.Record
		for i, l := range lines {
			recs = append(recs, &shard.Record{Index: uint64(i + 1), Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{setArgv(l)}})
		}
		return recs
	}
	st, _ := applySets(t, cmds(
		[]string{"XADD", "s", "1-1", "f", "v"},
		[]string{"XADD", "s", "2-1", "f", "v"},
		[]string{"XGROUP", "CREATE", "s", "g", "0"},
		[]string{"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"},
	))
	// Cut the group's record to its old length.
	tx := st.WriteTx()
	sub := groupSub([]byte("g"))
	v, ok := tx.Member([]byte("s"), sub)
	if !ok || len(v) != groupRecordLen {
		t.Fatalf("group record %q", v)
	}
	tx.SetMember([]byte("s"), sub, v[:40])
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}
	applyTo(t, st, cmds(
		[]string{"XGROUP", "SETID", "s", "g", "0"},
		[]string{"XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", ">"},
	))
	if got := setRun(st, "XPENDING", "s", "g").String(); got != `[:2, "1-1", "2-1", [["c1", "1"], ["c2", "1"]]]` {
		t.Fatalf("XPENDING after the handover: %s", got)
	}
	r := st.ReadTx(0, 0, true)
	defer r.Close()
	if v, _ := r.Member([]byte("s"), sub); len(v) != groupRecordLen || idFrom(v[40:]) != (streamID{2, 1}) || idFrom(v[56:]) != (streamID{1, 1}) {
		t.Fatalf("saved group record %x", v)
	}
}

// applyTo applies recs to st, one group each.
func applyTo(t *testing.T, st *store.Store, recs []*shard.Record) {
	for _, rec := range recs {
		tx := st.WriteTx()
		tx.DB, tx.Now = rec.DB, rec.Time
		Apply(tx, rec, nil, nil, nil)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
}

// The group's pelMin stays at or before its first pending entry as
// entries are acked in any order, claimed, forced in below it and dropped
// with their consumer (each step's XPENDING must list every pending entry:
// a bound past one would hide it), and moves up to the first one once
// pelMinEvery entries have left the list, or the list empties.
func TestGroupPelMin(t *testing.T) {
	rec := func(args ...string) *shard.Record {
		return &shard.Record{Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{setArgv(args)}}
	}
	var recs []*shard.Record
	for i := 1; i <= 100; i++ {
		recs = append(recs, rec("XADD", "s", fmt.Sprintf("%d-1", i), "f", "v"))
	}
	recs = append(recs, rec("XGROUP", "CREATE", "s", "g", "0"),
		rec("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">"),
		rec("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"))
	st, _ := applySets(t, recs)
	pelMin := func() streamID {
		r := st.ReadTx(0, 0, true)
		defer r.Close()
		v, _ := r.Member([]byte("s"), groupSub([]byte("g")))
		return decodeGroup([]byte("g"), v).pelMin
	}
	ids := func(from, to int) (out []string) {
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("%d-1", i))
		}
		return out
	}
	xack := append([]string{"XACK", "s", "g"}, ids(5, 37)...) // 33: a lookup
	steps := []struct {
		cmd     []string
		pelMin  streamID
		pending string
	}{
		{nil, streamID{1, 1}, "1-1 2-1 3-1"},
		{[]string{"XACK", "s", "g", "2-1", "3-1"}, streamID{1, 1}, "1-1 4-1 5-1"},
		{[]string{"XACK", "s", "g", "1-1"}, streamID{1, 1}, "4-1 5-1 6-1"},
		{xack, streamID{4, 1}, "4-1 38-1 39-1"},
		{[]string{"XCLAIM", "s", "g", "c3", "0", "2-1", "FORCE"}, streamID{2, 1}, "2-1 4-1 38-1"},
		{[]string{"XGROUP", "DELCONSUMER", "s", "g", "c2"}, streamID{2, 1}, "2-1"},
		{[]string{"XACK", "s", "g", "4-1", "2-1"}, streamID{100, 1}, ""},
	}
	for _, step := range steps {
		if step.cmd != nil {
			applyTo(t, st, []*shard.Record{rec(step.cmd...)})
		}
		if got := pelMin(); got != step.pelMin {
			t.Fatalf("after %v: pelMin %v, want %v", step.cmd, got, step.pelMin)
		}
		var ids []string
		r := setRun(st, "XPENDING", "s", "g", "-", "+", "3")
		for _, row := range r.Elems {
			ids = append(ids, row.Elems[0].Str)
		}
		if got := strings.Join(ids, " "); got != step.pending {
			t.Fatalf("after %v: XPENDING lists %q, want %q", step.cmd, got, step.pending)
		}
	}
}
