package server

import (
	"errors"
	"net"
	"time"

	"basalt/internal/command"
	"basalt/internal/shard"
)

// blockingCall runs BLPOP and its kin outside MULTI: the record is proposed
// with Block set; if it finds nothing, the apply loop keeps it and retries
// it when one of its keys is written (see shard/block.go). Meanwhile this
// goroutine waits for the reply, the timeout or the client's disconnect.
func (c *Client) blockingCall(argv [][]byte) {
	w := c.reply()
	timeout, errMsg := command.BlockTimeout(argv)
	if errMsg != "" {
		// Not blocking: the command answers the error, after the checks
		// Redis makes before the timeout's.
		c.propose(shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}})
		return
	}
	p := getProposal(c)
	p.Rec = shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}, Block: true}
	if err := c.srv.shard.Propose(p); err != nil {
		putProposal(p)
		w.Error(proposeError(err))
		return
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	gone, stopWatching := c.watchDisconnect()
	defer stopWatching()
	h := c.srv.shard.Blocking(p)
	busy := command.ScriptBusyC()
	for {
		select {
		case <-p.Done:
		case <-busy:
			if p.Withdraw() { // queued behind a script past its time limit
				w.Error(command.ErrBusy)
				return
			}
			busy = nil // the loop has it: wait as usual
			continue
		case <-expired:
			if withdrawn(h, p) {
				w.NullArray() // what Redis answers a timeout, whatever the command
				return
			}
		case <-gone:
			if withdrawn(h, p) {
				c.closing = true
				return
			}
		}
		break
	}
	w.Raw(p.W.Bytes())
	putProposal(p)
}

// withdrawn cancels a blocking call; if the apply loop had it in hand, it
// waits for the outcome: a reply (served after all) or none (withdrawn).
// A cancelled call's proposal goes back to the pool unless the shard may
// still hold it (it was still queued, maybe behind a long script).
func withdrawn(h shard.BlockHandle, p *shard.Proposal) bool {
	if p.Withdraw() {
		return true
	}
	if h.Cancel() {
		putProposal(p)
		return true
	}
	<-p.Done
	if p.W.Len() == 0 {
		putProposal(p)
		return true
	}
	return false
}

// watchDisconnect reports on gone if the client hangs up while blocked.
// It reads ahead into the client's buffer, which is all a pipelined next
// command needs. stop ends the watch before the connection is read again.
func (c *Client) watchDisconnect() (gone <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.rd.Buffered() > 0 {
			return // the next command is already here
		}
		var ne net.Error
		if err := c.rd.Wait(); err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			close(ch)
		}
	}()
	return ch, func() {
		c.nc.SetReadDeadline(time.Now())
		<-done
		c.nc.SetReadDeadline(time.Time{})
	}
}
