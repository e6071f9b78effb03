package command

import (
	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Host is what applying a record tells or asks of the server it runs in,
// beyond its shard (shard.Env). The server passes itself in (Applier), so
// this package keeps no hooks of its own; nil tells and asks nothing.
type Host interface {
	// ScriptCalled is told of every command that a client's script
	// running now (not a replayed one) called with redis.call, after it
	// ran, with its reply: MONITOR shows it as "lua", the slowlog logs it
	// and its error, if any, is counted.
	ScriptCalled(db int, cmd *Command, argv [][]byte, ns int64, reply []byte)
	// ScriptRefused is told of such a redis.call that was refused before
	// it ran (cmd nil: no such command): Redis counts it as a rejected
	// call and an error reply.
	ScriptRefused(cmd *Command, msg string)
	// PublishReceivers counts this node's subscribers that a message on
	// channel reaches now: PUBLISH from a script answers it.
	PublishReceivers(channel []byte) int
	// ScriptACL checks a script's redis.call against its user's rules
	// (Record.ACL): it returns the error of a refused call, or "". live
	// says the leader runs it for a client now (a denial is logged). The
	// ACL package knows the command table, so this one cannot know it.
	ScriptACL(rules string, cmd *Command, argv [][]byte, live bool) string
}

// Applier is the shards' applier for a server: it runs a record's
// commands against the write batch, depending only on the state and the
// record; host only hears of what scripts did.
func Applier(host Host) shard.Applier {
	return func(tx *store.Tx, rec *shard.Record, sr *shard.Run, env shard.Env, w *resp.Writer) {
		apply(tx, rec, sr, env, host, w)
	}
}

// Apply is the applier of a record outside a server (tests, tools).
func Apply(tx *store.Tx, rec *shard.Record, sr *shard.Run, env shard.Env, w *resp.Writer) {
	apply(tx, rec, sr, env, nil, w)
}

func apply(tx *store.Tx, rec *shard.Record, sr *shard.Run, env shard.Env, host Host, w *resp.Writer) {
	// The shard gives no writer exactly when it applies a record from the
	// log: the leader applying a client's record is the live case.
	live := w != nil
	if w == nil {
		w = resp.NewWriter(2) // replaying: the reply is thrown away
	}
	switch rec.Kind {
	case shard.KindCommand:
		var cmd *Command
		if sr != nil {
			cmd, _ = sr.Command.(*Command)
		}
		run(tx, rec, sr, host, cmd, rec.Cmds[0], rec.Seed, w, live)
	case shard.KindExec:
		applyExec(tx, rec, sr, env, host, w, live)
	case shard.KindExpire: // written by versions before KindExpireDue
		for _, key := range rec.Cmds[0] {
			tx.Lookup(key) // deletes the key if it is past its expiry
		}
	case shard.KindExpireDue:
		n := 0
		c := &Ctx{Tx: tx, W: resp.NewWriter(2), rec: rec}
		for _, entry := range rec.Cmds[0] {
			if tx.ExpireDue(entry) {
				n++
			} else if len(entry) > 8 {
				expireHashFields(c, entry[8:]) // the entry may be a hash's due time
			}
		}
		w.Int(int64(n)) // keys expired, for INFO's expired_keys
	case shard.KindAborted:
		w.NullArray()
	case shard.KindACL:
		tx.PutACL(rec.Cmds[0][0])
		w.OK()
	case shard.KindTopology:
		tx.PutTopology(rec.Cmds[0][0])
		w.OK()
	}
}

// run runs one command of rec on tx, live if the leader applies rec for a
// client: cmd, or argv's if cmd is nil.
func run(tx *store.Tx, rec *shard.Record, sr *shard.Run, host Host, cmd *Command, argv [][]byte, seed uint64, w *resp.Writer, live bool) {
	if cmd == nil {
		cmd = Lookup(argv[0])
	}
	if cmd == nil || cmd.Run == nil {
		w.Error("ERR unknown command '" + string(argv[0]) + "'")
		return
	}
	runCmd(cmd, &Ctx{Tx: tx, Args: argv, W: w, Seed: seed, Host: host, rec: rec, run: sr, live: live})
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
func applyExec(tx *store.Tx, rec *shard.Record, sr *shard.Run, env shard.Env, host Host, w *resp.Writer, live bool) {
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
			if sr != nil {
				sr.ConnAt = append(sr.ConnAt, len(w.Buf))
			}
			if ch, msg, origin, ok := PublishArgs(argv); ok && env != nil && !env.Lone() {
				// In a cluster PUBLISH goes through the log with its
				// transaction, so every node delivers it in its place; the
				// leader's connection puts the count in the reply.
				var report func(int)
				if sr != nil {
					i := len(sr.Receivers)
					sr.Receivers = append(sr.Receivers, 0)
					report = func(n int) { sr.Receivers[i] = n }
				}
				env.Publish(tx, rec, ch, msg, origin, report)
			}
			continue
		}
		run(tx, rec, sr, host, nil, argv, rec.Seed+uint64(i), w, live)
	}
}

// applySelect is SELECT inside EXEC: it changes the database the following
// queued commands address.
func applySelect(tx *store.Tx, arg []byte, w *resp.Writer) {
	db, msg := SelectDB(arg, tx.Clustered(), tx.Databases())
	if msg != "" {
		w.Error(msg)
		return
	}
	tx.DB = db
	w.OK()
}

// SelectDB is SELECT's check of its argument, the one place of it: the
// database to address, or Redis's error.
func SelectDB(arg []byte, clustered bool, databases int) (db int, msg string) {
	n, ok := num.ParseInt(arg)
	switch {
	case !ok:
		return 0, ErrNotInt
	case n != int64(int32(n)):
		return 0, "ERR value is out of range, value must between -2147483648 and 2147483647"
	case n != 0 && clustered:
		return 0, ErrSelectCluster
	case n < 0 || n >= int64(databases):
		return 0, ErrDBIndex
	}
	return int(n), ""
}
