package server

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"basalt/internal/resp"
	"basalt/internal/shard"
)

// blockingCall runs BLPOP and its kin outside MULTI: the record is proposed
// with Block set; if it finds nothing, the apply loop keeps it and retries
// it when one of its keys is written (see shard/block.go). Meanwhile this
// goroutine waits for the reply, the timeout or the client's disconnect.
func (c *Client) blockingCall(argv [][]byte) {
	w := c.reply()
	timeout, errMsg := blockTimeout(argv)
	if errMsg != "" {
		w.Error(errMsg)
		return
	}
	p := getProposal(c.proto)
	defer putProposal(p)
	p.Rec = shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}, Block: true}
	if err := c.srv.shard.Propose(p); err != nil {
		w.Error("ERR server is shutting down")
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
	select {
	case <-p.Done:
	case <-expired:
		if h.Cancel() {
			timedOut(w, argv)
			return
		}
		<-p.Done
	case <-gone:
		if h.Cancel() {
			c.closing = true
			return
		}
		<-p.Done
	}
	w.Raw(p.W.Bytes())
}

// timedOut writes what a blocking command answers when its time is up.
func timedOut(w *resp.Writer, argv [][]byte) {
	switch strings.ToLower(string(argv[0])) {
	case "blmove", "brpoplpush":
		w.Null()
	default:
		w.NullArray()
	}
}

// blockTimeout reads the timeout argument (seconds, may be fractional; 0
// waits forever), with Redis's errors.
func blockTimeout(argv [][]byte) (time.Duration, string) {
	arg := argv[len(argv)-1]
	switch strings.ToLower(string(argv[0])) {
	case "blmpop", "bzmpop":
		arg = argv[1]
	}
	f, err := strconv.ParseFloat(string(arg), 64)
	if err != nil || math.IsNaN(f) || strings.TrimSpace(string(arg)) != string(arg) {
		return 0, "ERR timeout is not a float or out of range"
	}
	// As Redis: whole milliseconds, truncated (so 0.0001 waits forever).
	ms := f * 1000
	if ms >= math.MaxInt64-float64(time.Now().UnixMilli()) {
		return 0, "ERR timeout is out of range"
	}
	if int64(ms) < 0 {
		return 0, "ERR timeout is negative"
	}
	if ms > 1e12 { // over 30 years: as good as forever, and no overflow
		return 0, ""
	}
	return time.Duration(int64(ms)) * time.Millisecond, ""
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
