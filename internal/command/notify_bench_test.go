package command

import (
	"strconv"
	"testing"

	"basalt/internal/shard"
	"basalt/internal/store"
)

// benchApply applies cmd key value records, 100 to a batch, with keyspace
// notifications off or on (KEA, the events discarded): the cost of raising
// and collecting them in the apply loop.
func benchApply(b *testing.B, cmd string, on bool) {
	benchApplyArgs(b, on, func(key []byte, i int) [][]byte {
		return [][]byte{[]byte(cmd), key, []byte("value")}
	})
}

// benchApplyArgs applies the records argv makes for the i-th write, 100
// to a batch, over 1000 keys.
func benchApplyArgs(b *testing.B, on bool, argv func(key []byte, i int) [][]byte) {
	st, err := store.Open(b.TempDir(), store.Options{Databases: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if on {
		st.SetNotify(store.NotifyKeyspace|store.NotifyKeyevent|store.NotifyAll, func(store.NotifyFlags, []store.Event) {})
	}
	rec := &shard.Record{Kind: shard.KindCommand}
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; {
		tx := st.WriteTx()
		tx.Now = 1
		for j := 0; j < 100 && i < b.N; j, i = j+1, i+1 {
			rec.Cmds = [][][]byte{argv(keys[i%1000], i)}
			Apply(tx, rec, nil, nil, nil)
		}
		if err := tx.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplySET(b *testing.B)      { benchApply(b, "SET", false) }
func BenchmarkApplyLPUSH(b *testing.B)    { benchApply(b, "LPUSH", false) }
func BenchmarkApplySETKEA(b *testing.B)   { benchApply(b, "SET", true) }
func BenchmarkApplyLPUSHKEA(b *testing.B) { benchApply(b, "LPUSH", true) }

// BenchmarkApplyHSET writes 1000 small hashes: each gets a new field on
// the first 20 rounds and rewrites them after, as counters and user
// records do.
func BenchmarkApplyHSET(b *testing.B) {
	fields := make([][]byte, 20)
	for i := range fields {
		fields[i] = []byte("field:" + strconv.Itoa(i))
	}
	benchApplyArgs(b, false, func(key []byte, i int) [][]byte {
		return [][]byte{[]byte("HSET"), key, fields[i/1000%len(fields)], []byte("value")}
	})
}
