package server

import (
	"basalt/internal/command"
	"basalt/internal/shard"
)

// script runs EVAL, EVALSHA and their read-only forms. EVALSHA becomes
// EVAL with the cached body here, so the record is self-contained. EVAL
// is proposed as one record and runs in the apply loop; the read-only
// forms, and scripts flagged no-writes, run on a snapshot of applied state,
// like any read.
func (c *Client) script(argv [][]byte, now int64) {
	argv, read, msg := command.PrepareScript(argv)
	if msg != "" {
		c.reply().Error(msg)
		return
	}
	cmd := command.Lookup(argv[0])
	if read {
		w := c.reply()
		tx := c.sh.Store().ReadTx(c.db, now, true)
		defer tx.Close()
		cmd.Run(&command.Ctx{Tx: tx, Args: argv, W: w, Host: c.srv, ACL: c.scriptACL()})
		return
	}
	c.propose(shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}, ACL: c.scriptACL()})
}
