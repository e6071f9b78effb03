package command

import (
	"strings"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Apply is the shard's applier: it runs a record's commands against the
// write batch. It depends only on the state and the record.
func Apply(tx *store.Tx, rec *shard.Record, sh *shard.Shard, w *resp.Writer) {
	if w == nil {
		w = resp.NewWriter(2) // replaying: the reply is thrown away
	}
	switch rec.Kind {
	case shard.KindCommand:
		Exec(tx, rec.Cmds[0], rec.Seed, w)
	case shard.KindExec:
		applyExec(tx, rec, sh, w)
	case shard.KindExpire:
		for _, key := range rec.Cmds[0] {
			tx.Lookup(key) // deletes the key if it is past its expiry
		}
	case shard.KindAborted:
		w.NullArray()
	}
}

// Exec runs one command on tx. The command must exist and its arity must
// have been checked.
func Exec(tx *store.Tx, argv [][]byte, seed uint64, w *resp.Writer) {
	cmd := Lookup(argv[0])
	if cmd == nil || cmd.Run == nil {
		w.Error("ERR unknown command '" + string(argv[0]) + "'")
		return
	}
	cmd.Run(&Ctx{Tx: tx, Args: argv, W: w, Seed: seed})
}

// applyExec runs a MULTI/EXEC block as one record: all or (if a watched key
// changed) nothing, with no other write in between.
func applyExec(tx *store.Tx, rec *shard.Record, sh *shard.Shard, w *resp.Writer) {
	for _, k := range rec.Watch {
		if (sh != nil && sh.WatchDirty(k)) || (k.Live && !tx.ExistsIn(k.DB, k.Key)) {
			rec.Kind, rec.Cmds, rec.Watch = shard.KindAborted, nil, nil
			w.NullArray()
			return
		}
	}
	rec.Watch = nil // checked; the log needs only the outcome
	w.ArrayLen(len(rec.Cmds))
	for i, argv := range rec.Cmds {
		// SELECT is the one connection command that changes what the
		// following queued commands address.
		if strings.EqualFold(string(argv[0]), "select") {
			tx.DB = SelectIndex(argv[1])
			w.OK()
			continue
		}
		Exec(tx, argv, rec.Seed+uint64(i), w)
	}
}

// SelectIndex parses a SELECT argument already validated by the server.
func SelectIndex(arg []byte) int {
	n := 0
	for _, c := range arg {
		n = n*10 + int(c-'0')
	}
	return n
}
