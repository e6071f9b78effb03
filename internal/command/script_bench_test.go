package command

import (
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// BenchmarkEval measures one 5-command script applied in a write batch,
// as the apply loop runs it.
func BenchmarkEval(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{Databases: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	body := []byte(`local n = redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])
redis.call('SET', KEYS[1] .. ':last', n)
local v = redis.call('GET', KEYS[1] .. ':last')
redis.call('EXPIRE', KEYS[1], 3600)
redis.call('HGET', KEYS[1], 'n')
return v`)
	benchApplyCall(b, st, "eval", body)
}

// BenchmarkFcall is BenchmarkEval's script as a function of a library.
func BenchmarkFcall(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{Databases: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	lib := []byte(`#!lua name=benchlib
redis.register_function('bench_five', function(keys, args)
local n = redis.call('HINCRBY', keys[1], 'n', args[1])
redis.call('SET', keys[1] .. ':last', n)
local v = redis.call('GET', keys[1] .. ':last')
redis.call('EXPIRE', keys[1], 3600)
redis.call('HGET', keys[1], 'n')
return v
end)`)
	w := resp.NewWriter(2)
	rec := &shard.Record{Kind: shard.KindCommand}
	rec.Cmds = [][][]byte{{[]byte("function"), []byte("load"), lib}}
	load := st.WriteTx()
	Apply(load, rec, nil, nil, w)
	if err := load.Commit(false); err != nil || w.Buf[0] == '-' {
		b.Fatalf("load: %q %v", w.Buf, err)
	}
	benchApplyCall(b, st, "fcall", []byte("bench_five"))
}

// benchApplyCall applies name arg 1 key 1 (a script call) b.N times in one
// write batch, as the apply loop runs it.
func benchApplyCall(b *testing.B, st *store.Store, name string, arg []byte) {
	w := resp.NewWriter(2)
	tx := st.WriteTx()
	defer tx.Close()
	tx.Now = 1
	rec := &shard.Record{Kind: shard.KindCommand}
	argv := [][]byte{[]byte(name), arg, []byte("1"), []byte("key"), []byte("1")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset()
		rec.Cmds = [][][]byte{argv}
		Apply(tx, rec, nil, nil, w)
	}
	if w.Buf[0] != '$' {
		b.Fatalf("reply %q", w.Buf)
	}
}
