package command

import (
	"testing"

	"basalt/internal/shard"
	"basalt/internal/store"
)

// A group record written before groups kept the bound of their pending
// IDs (40 bytes) still finds its pending entries: XREADGROUP after XGROUP
// SETID hands an entry pending with one consumer to another, and the
// group's next save stores the bound found.
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
	if !ok || len(v) != 56 {
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
	if v, _ := r.Member([]byte("s"), sub); len(v) != 56 || idFrom(v[40:]) != (streamID{2, 1}) {
		t.Fatalf("saved group record %x", v)
	}
}

// applyTo applies recs to st, one group each.
func applyTo(t *testing.T, st *store.Store, recs []*shard.Record) {
	for _, rec := range recs {
		tx := st.WriteTx()
		tx.DB, tx.Now = rec.DB, rec.Time
		Apply(tx, rec, nil, nil)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
}
