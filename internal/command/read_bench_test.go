package command

import (
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// benchRead runs one read command the way a connection does (a read Tx on
// applied state, the reply appended to a reused writer) on the keys of
// bench/run.sh's read tests: bench:z, 10,000 members m0..m9999 scored
// 0..9999, and bench:h, 100 fields. With flushed, the members are read from
// sstables instead of the memtable.
func benchRead(b *testing.B, flushed bool, argv ...string) {
	st, err := store.Open(b.TempDir(), store.Options{Databases: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	// As bench/run.sh fills them: ZADDs of 1,000 members and one HSET, each
	// its own batch (one big batch would sit in Pebble as a flushable
	// batch, not in the memtable).
	var cmds [][][]byte
	for i := 0; i < 10000; i += 1000 {
		zadd := [][]byte{[]byte("zadd"), []byte("bench:z")}
		for j := i; j < i+1000; j++ {
			zadd = append(zadd, []byte(strconv.Itoa(j)), []byte("m"+strconv.Itoa(j)))
		}
		cmds = append(cmds, zadd)
	}
	hset := [][]byte{[]byte("hset"), []byte("bench:h")}
	for i := 0; i < 100; i++ {
		hset = append(hset, []byte("field"+strconv.Itoa(i)), []byte("value-"+strconv.Itoa(i)))
	}
	for _, cmd := range append(cmds, hset) {
		tx := st.WriteTx()
		tx.Now = 1
		Apply(tx, &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{cmd}}, nil, nil, nil)
		if err := tx.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	if flushed {
		if err := st.Pebble().Flush(); err != nil {
			b.Fatal(err)
		}
	}
	args := make([][]byte, len(argv))
	for i, a := range argv {
		args[i] = []byte(a)
	}
	cmd := Lookup(args[0])
	w := resp.NewWriter(2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Reset()
		rtx := st.ReadTx(0, 1, false)
		cmd.Run(&Ctx{Tx: rtx, Args: args, W: w})
		rtx.Close()
	}
	if w.Len() < 1000 {
		b.Fatalf("short reply: %q", w.Bytes())
	}
}

func BenchmarkReadZRangeByScore(b *testing.B) {
	benchRead(b, false, "zrangebyscore", "bench:z", "100", "200")
}
func BenchmarkReadZRangeByScoreFlushed(b *testing.B) {
	benchRead(b, true, "zrangebyscore", "bench:z", "100", "200")
}
func BenchmarkReadHGetAll(b *testing.B)        { benchRead(b, false, "hgetall", "bench:h") }
func BenchmarkReadHGetAllFlushed(b *testing.B) { benchRead(b, true, "hgetall", "bench:h") }
