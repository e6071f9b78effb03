package server

import (
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
)

// MULTI/EXEC/WATCH. Commands are queued in the client; EXEC turns them into
// one record, so they apply atomically and in isolation. WATCH remembers
// each key with the applied index at the time, and the record carries them:
// the apply loop aborts the EXEC if any changed since.

func isTxControl(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// rejectInMulti marks the transaction as failed when a command is refused
// while queuing, so that EXEC answers EXECABORT.
func (c *Client) rejectInMulti() {
	if c.multi {
		c.multiErr = true
	}
}

func cmdMulti(c *Client, argv [][]byte) {
	if c.multi {
		c.reply().Error("ERR MULTI calls can not be nested")
		return
	}
	c.multi, c.multiErr, c.queued = true, false, nil
	c.reply().OK()
}

func cmdDiscard(c *Client, argv [][]byte) {
	if !c.multi {
		c.reply().Error("ERR DISCARD without MULTI")
		return
	}
	c.endMulti()
	c.reply().OK()
}

func (c *Client) endMulti() {
	c.multi, c.multiErr, c.queued = false, false, nil
	c.txSlot, c.txCross = -1, false
	c.unwatchAll()
}

func cmdExec(c *Client, argv [][]byte) {
	if !c.multi {
		c.reply().Error("ERR EXEC without MULTI")
		return
	}
	if c.multiErr {
		c.endMulti()
		c.reply().Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	queued, watched := command.ResolveQueued(c.queued), c.watching
	denied := c.execDenials(queued)
	c.execDB = c.db
	if c.track != nil {
		for _, q := range queued {
			c.trackKeys(command.Lookup(q[0]), q)
		}
	}
	c.multi, c.multiErr, c.queued, c.watching = false, false, nil, nil
	c.txSlot, c.txCross = -1, false
	w := c.reply()
	c.execing = true
	defer c.endExec()
	if !c.sh.Lone() && hasPublish(queued) {
		// In a cluster the transaction's messages go out as its record
		// commits, before this reply is complete (see holdForExec).
		c.holdForExec()
	}
	p := getProposal(c)
	p.Rec = shard.Record{Kind: shard.KindExec, DB: c.db, Cmds: queued, Watch: watched, ACL: c.scriptACLFor(queued)}
	err := c.proposeHere(p)
	withdrawn := err == nil && !c.await(p)
	// Unregister only now: until the record was applied, the apply loop had
	// to see modifications of these keys.
	for _, k := range watched {
		c.watchShard.Watches.Unwatch(k.DB, k.Key)
	}
	if withdrawn { // queued behind a script past its time limit
		w.Error("EXECABORT Transaction discarded because of: " + command.ErrBusy)
		return
	}
	defer putProposal(p)
	if err != nil {
		w.Error(proposeError(err))
		return
	}
	if p.Rec.Kind == shard.KindAborted {
		w.Raw(p.W.Bytes())
		return
	}
	c.execApplied = queued // for MONITOR and the slowlog (calls.go)
	// SELECT inside MULTI changes the client's database for good.
	for _, q := range queued {
		if command.Lookup(q[0]).Name == "select" {
			if db, ok := c.parseDB(q[1]); ok {
				c.db = db
			}
		}
	}
	c.spliceConnReplies(w, p.W.Bytes(), queued, &p.Run, denied)
}

// spliceConnReplies copies an EXEC reply to w, running the queued
// connection commands here and inserting their replies at the offsets the
// apply loop left for them (run.ConnAt). A PUBLISH that went through the
// log with the record (in a cluster) answers the count its commit left in
// run.Receivers; the others (on a lone node) publish now. denied are
// the replies of the commands the ACL refused at EXEC, by position.
func (c *Client) spliceConnReplies(w *resp.Writer, reply []byte, queued [][][]byte, run *shard.Run, denied map[int]string) {
	prev := 0
	slot, published := 0, 0
	c.inExec = true
	defer func() { c.inExec = false }()
	for i, q := range queued {
		cmd := command.Lookup(q[0])
		if cmd.Flags&command.Conn == 0 || cmd.Name == "select" {
			continue
		}
		at := run.ConnAt[slot]
		w.Raw(reply[prev:at])
		prev = at
		slot++
		if msg, ok := denied[i]; ok {
			w.Error(msg)
			continue
		}
		if ch, msg, _, ok := command.PublishArgs(q); ok {
			if published < len(run.Receivers) {
				w.Int(int64(run.Receivers[published]))
				published++
			} else {
				c.publishHere(ch, msg)
			}
			continue
		}
		connHandlerOf(cmd)(c, q)
	}
	w.Raw(reply[prev:])
}

func cmdWatch(c *Client, argv [][]byte) {
	if c.multi {
		c.reply().Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	w := c.reply()
	for _, key := range argv[1:] {
		if c.isWatching(key) {
			continue
		}
		c.watchShard = c.sh
		idx := c.sh.Watch(c.db, key)
		tx := c.sh.Store().ReadTx(c.db, nowMs(), false)
		// No keymiss event and no lazy expiry: WATCH is no read.
		live, expired := tx.Alive(c.db, key), tx.ExpiredIn(c.db, key)
		tx.Close()
		c.watching = append(c.watching, shard.WatchKey{DB: c.db, Key: key, Index: idx, Live: live, Expired: expired})
	}
	w.OK()
}

func (c *Client) isWatching(key []byte) bool {
	for _, w := range c.watching {
		if w.DB == c.db && string(w.Key) == string(key) {
			return true
		}
	}
	return false
}

func cmdUnwatch(c *Client, argv [][]byte) {
	c.unwatchAll()
	c.reply().OK()
}

func (c *Client) unwatchAll() {
	for _, w := range c.watching {
		c.watchShard.Watches.Unwatch(w.DB, w.Key)
	}
	c.watching = nil
	if c.srv.clustered() { // and the WATCHes proxied to another node (execElsewhere)
		if c.upWatched && c.up != nil {
			c.up.sendAs([][]byte{[]byte("UNWATCH")}, upReply{drop: true})
		}
		c.upWatched, c.watchLost = false, false
	}
}
