package command

import (
	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Apply is the shard's applier: it runs a record's commands against the
// write batch. It depends only on the state and the record.
func Apply(tx *store.Tx, rec *shard.Record, env shard.Env, w *resp.Writer) {
	// The shard gives no writer exactly when it applies a record from the
	// log: the leader applying a client's record is the live case.
	live := w != nil
	if w == nil {
		w = resp.NewWriter(2) // replaying: the reply is thrown away
	}
	switch rec.Kind {
	case shard.KindCommand:
		run(tx, rec, rec.Cmds[0], rec.Seed, w, live)
	case shard.KindExec:
		applyExec(tx, rec, env, w, live)
	case shard.KindExpire: // written by versions before KindExpireDue
		for _, key := range rec.Cmds[0] {
			tx.Lookup(key) // deletes the key if it is past its expiry
		}
	case shard.KindExpireDue:
		n := 0
		for _, entry := range rec.Cmds[0] {
			if tx.ExpireDue(entry) {
				n++
			}
		}
		w.Int(int64(n)) // keys expired, for INFO's expired_keys
	case shard.KindAborted:
		w.NullArray()
	case shard.KindACL:
		tx.PutACL(rec.Cmds[0][0])
		w.OK()
	}
}

// Exec runs one command of rec on tx. The command must exist and its arity
// must have been checked.
func Exec(tx *store.Tx, rec *shard.Record, argv [][]byte, seed uint64, w *resp.Writer) {
	run(tx, rec, argv, seed, w, false)
}

// run is Exec, live if the leader applies rec for a client.
func run(tx *store.Tx, rec *shard.Record, argv [][]byte, seed uint64, w *resp.Writer, live bool) {
	cmd := Lookup(argv[0])
	if cmd == nil || cmd.Run == nil {
		w.Error("ERR unknown command '" + string(argv[0]) + "'")
		return
	}
	runCmd(cmd, &Ctx{Tx: tx, Args: argv, W: w, Seed: seed, rec: rec, live: live})
}

// runCmd runs cmd in the apply loop. A read command's lookups raise "keymiss"
// events, as in Redis (a write's do not).
func runCmd(cmd *Command, c *Ctx) {
	if cmd.Flags&ReadOnly != 0 && c.Tx.NotifyOn(store.NotifyKeyMiss) {
		defer c.Tx.KeyMiss(c.Tx.KeyMiss(true))
	}
	cmd.Run(c)
}

// applyExec runs a MULTI/EXEC block as one record: all or (if a watched key
// changed) nothing, with no other write in between.
func applyExec(tx *store.Tx, rec *shard.Record, env shard.Env, w *resp.Writer, live bool) {
	for _, k := range rec.Watch {
		if k.Expired && !tx.Alive(k.DB, k.Key) {
			// Expired when watched and gone now: its removal is no
			// change (Redis's watchedKey.expired). A write that
			// recreated it and a DEL since are missed, as the stamps
			// cannot tell them from the removal.
			continue
		}
		if (env != nil && env.WatchDirty(k)) || (k.Live && !tx.Alive(k.DB, k.Key)) {
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
		cmd := Lookup(argv[0])
		if cmd != nil && cmd.Name == "select" {
			applySelect(tx, argv[1], w)
			continue
		}
		// Other connection commands touch no data: the connection runs them
		// once the record is applied and puts their replies here.
		if cmd != nil && cmd.Flags&Conn != 0 {
			rec.ConnAt = append(rec.ConnAt, len(w.Buf))
			if ch, msg, origin, ok := PublishArgs(argv); ok && env != nil && !env.Lone() {
				// In a cluster PUBLISH goes through the log with its
				// transaction, so every node delivers it in its place; the
				// leader's connection puts the count in the reply.
				i := len(rec.Receivers)
				rec.Receivers = append(rec.Receivers, 0)
				var report func(int)
				if live {
					report = func(n int) { rec.Receivers[i] = n }
				}
				env.Publish(tx, rec, ch, msg, origin, report)
			}
			continue
		}
		run(tx, rec, argv, rec.Seed+uint64(i), w, live)
	}
}

// applySelect is SELECT inside EXEC: it changes the database the following
// queued commands address, with SELECT's own checks.
func applySelect(tx *store.Tx, arg []byte, w *resp.Writer) {
	n, ok := num.ParseInt(arg)
	switch {
	case !ok:
		w.Error(ErrNotInt)
	case n != int64(int32(n)):
		w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
	case n != 0 && tx.Clustered():
		w.Error(ErrSelectCluster)
	case n < 0 || n >= int64(tx.Databases()):
		w.Error(ErrDBIndex)
	default:
		tx.DB = int(n)
		w.OK()
	}
}
