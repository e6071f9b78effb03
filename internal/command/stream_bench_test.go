package command

import (
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// BenchmarkGroupReadAck measures a consumer group's XREADGROUP ... COUNT 1 >
// and the XACK of what the group before read, 100 of each to a batch, as
// the apply loop runs them under bench/streamgroup: one op is one pair.
func BenchmarkGroupReadAck(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{Databases: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w := resp.NewWriter(2)
	rec := &shard.Record{Kind: shard.KindCommand}
	apply := func(tx *store.Tx, args ...string) {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		rec.Cmds = [][][]byte{argv}
		w.Reset()
		Apply(tx, rec, nil, nil, w)
		if len(w.Buf) > 0 && w.Buf[0] == '-' {
			b.Fatalf("%v: %s", args, w.Buf)
		}
	}
	const batch = 100
	total := b.N + batch
	for i := 0; i < total; i += 1000 {
		tx := st.WriteTx()
		tx.Now = 1
		for j := i; j < min(i+1000, total); j++ {
			apply(tx, "XADD", "s", strconv.Itoa(j+1)+"-0", "field", "value")
		}
		if err := tx.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	tx := st.WriteTx()
	tx.Now = 1
	apply(tx, "XGROUP", "CREATE", "s", "g", "0")
	if err := tx.Commit(false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	read := 0
	for i := 0; i < b.N; {
		tx := st.WriteTx()
		tx.Now = 2
		from := read
		for j := 0; j < batch && i < b.N; j, i = j+1, i+1 {
			apply(tx, "XREADGROUP", "GROUP", "g", "c"+strconv.Itoa(j%50), "COUNT", "1", "STREAMS", "s", ">")
			read++
			if from > batch {
				apply(tx, "XACK", "s", "g", strconv.Itoa(from-batch+j+1)+"-0")
			}
		}
		if err := tx.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
}
