package server

import (
	"errors"
	"net"
	"strings"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
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
	p.Rec = shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}}
	p.Run.Block = true
	if err := c.proposeHere(p); err != nil {
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
	h := c.sh.Blocking(p)
	busy := command.ScriptBusyC()
	unblocked := c.blockedUntilUnblock()
	defer c.blocked.Store(false)
	for {
		select {
		case <-p.Done:
		case asError := <-unblocked:
			if withdrawn(h, p) {
				if asError {
					w.Error(errUnblocked)
				} else {
					w.NullArray() // as a timeout
				}
				return
			}
		case <-busy:
			if p.Withdraw() { // queued behind a script past its time limit
				w.Error(command.ErrBusy)
				return
			}
			busy = nil // the loop has it: wait as usual
			continue
		case <-expired:
			// Redis serves a call whose key has data whatever its
			// timeout, so a call not tried yet is not withdrawn: it
			// is tried, and cancelled only if it would block.
			if cancelled(h, p) {
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
	return p.Withdraw() || cancelled(h, p)
}

// cancelled cancels a blocking call once it has been tried: it reports
// false if that try served it.
func cancelled(h shard.BlockHandle, p *shard.Proposal) bool {
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

// errUnblocked is what a blocked call answers to CLIENT UNBLOCK ... ERROR.
const errUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// blockedUntilUnblock marks c as waiting in a blocking call, which CLIENT
// UNBLOCK may end, and returns the channel its reason comes on. A reason
// sent as a former call ended is dropped.
func (c *Client) blockedUntilUnblock() <-chan bool {
	select {
	case <-c.unblock:
	default:
	}
	c.blocked.Store(true)
	return c.unblock
}

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: it ends another
// client's blocking call as its timeout would, or with an error, and
// answers 1; 0 if that client is not blocked. On a follower a client's
// blocking calls wait on the leader, so they are never blocked here.
func clientUnblock(c *Client, argv [][]byte) {
	w := c.reply()
	asError := false
	if len(argv) == 4 {
		switch strings.ToLower(string(argv[3])) {
		case "timeout":
		case "error":
			asError = true
		default:
			w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(argv) > 4 {
		w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try CLIENT HELP.")
		return
	}
	id, ok := num.ParseInt(argv[2])
	if !ok {
		w.Error(command.ErrNotInt)
		return
	}
	if o := c.srv.clientByID(id); o != nil && o.blocked.Load() {
		select {
		case o.unblock <- asError:
			w.Int(1)
			return
		default: // unblocked already
		}
	}
	w.Int(0)
}
