package server

import (
	"math/bits"
	"sync"
	"time"
)

// queryBuf follows what Redis 7.0's query buffer of the same client would
// hold (an sds string, allocated by jemalloc), so that CLIENT LIST's qbuf
// and qbuf-free and INFO's client_recent_max_input_buffer show Redis's
// figures for the same traffic; basalt reads into buffers of its own.
// It follows networking.c and server.c:
//   - a read into a buffer smaller than 16 KB makes room for 16 KB more,
//     exactly (sdsMakeRoomForNonGreedy), in jemalloc's size classes;
//   - an argument of 32 KB or more is read into a buffer of its own size,
//     which becomes the argument, and the next buffer is made that size;
//   - the clients cron, every 100 ms, frees the unused room of a client
//     idle for more than 2 s, shrinks a buffer over 32 KB that is more than
//     twice the peak since the last pass, and samples the input usage.
//
// Not followed: the greedy growth of a buffer that a pipeline fills past
// its room (what each read brings depends on the network). Times are
// nanotime readings.
type queryBuf struct {
	mu    sync.Mutex
	alloc int64 // Redis's sdsalloc
	len   int64 // sdslen: bytes read and not yet consumed
	peak  int64 // querybuf_peak since the last cron pass
	last  int64 // last interaction, for the idle rule
	next  int64 // the next cron pass
	slots [qbSlots]qbSlot
}

// Redis's constants (server.h) and clients cron.
const (
	protoIOBufLen        = 16 << 10
	protoMBulkBigArg     = 32 << 10
	protoResizeThreshold = 32 << 10
	clientsCronPeriod    = int64(100 * time.Millisecond)
	qbSlots              = 8 // CLIENTS_PEAK_MEM_USAGE_SLOTS: seconds of input usage kept
)

// qbSlot is the largest input usage a cron pass saw in one second.
type qbSlot struct{ sec, max int64 }

func newQueryBuf(now int64) *queryBuf {
	return &queryBuf{last: now, next: now + clientsCronPeriod}
}

// jemallocSize is the size class jemalloc serves a request of n bytes
// from: 8, then steps of 16 up to 128, then four classes per doubling.
func jemallocSize(n int64) int64 {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) &^ 15
	}
	step := int64(1) << (bits.Len64(uint64(n-1)) - 3)
	return (n + step - 1) / step * step
}

// sdsHeader is the header size of an sds string of capacity n (sdsReqType;
// never type 5 for a query buffer).
func sdsHeader(n int64) int64 {
	switch {
	case n < 1<<8:
		return 3
	case n < 1<<16:
		return 5
	case n < 1<<32:
		return 9
	}
	return 17
}

// usable is the capacity jemalloc gives an sds string asked for n bytes.
func usable(n int64) int64 {
	h := sdsHeader(n)
	return jemallocSize(h+n+1) - h - 1
}

// mallocSize is sdsZmallocSize of the buffer.
func (q *queryBuf) mallocSize() int64 {
	return jemallocSize(sdsHeader(q.alloc) + q.alloc + 1)
}

// advance runs the cron passes due by now. After a pass that changed
// nothing only the idle rule and the samples can differ, so a long gap
// runs only its last seconds.
func (q *queryBuf) advance(now int64) {
	if gap := now - q.next; gap > int64((qbSlots+3)*time.Second) {
		q.cronPass(q.next)
		q.next += gap - int64((qbSlots+2)*time.Second)
	}
	for ; q.next <= now; q.next += clientsCronPeriod {
		q.cronPass(q.next)
	}
}

// cronPass is clientsCronResizeQueryBuffer and the input half of
// clientsCronTrackExpansiveClients at time at.
func (q *queryBuf) cronPass(at int64) {
	sec := at / int64(time.Second)
	if q.alloc-q.len > 4<<10 {
		if sec-q.last/int64(time.Second) > 2 {
			q.alloc = q.len // sdsRemoveFreeSpace
		} else if q.alloc > protoResizeThreshold && q.alloc/2 > q.peak {
			q.alloc = max(q.len, q.peak) // sdsResize to the peak
		}
	}
	q.peak = q.len
	s := &q.slots[sec%qbSlots]
	if s.sec != sec {
		*s = qbSlot{sec: sec}
	}
	s.max = max(s.max, q.mallocSize())
}

// read records a command read from the socket: wire is its size in RESP,
// bigArg the size of its last argument of 32 KB or more (0 if none), and
// buffered what was read after it.
func (q *queryBuf) read(now, wire, bigArg, buffered int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.advance(now)
	if q.alloc < protoIOBufLen {
		q.alloc = max(q.alloc, usable(q.len+protoIOBufLen))
	}
	q.len = wire + buffered
	if bigArg > 0 {
		// The argument's own buffer left with it; the next one is made
		// as big, and holds what came after it.
		q.peak = max(q.peak, bigArg+2)
		q.alloc, q.len = usable(bigArg+2), buffered
	}
	q.peak = max(q.peak, q.len)
	q.last = now
}

// consumed records that the commands read were run: what is left is the
// input read after them.
func (q *queryBuf) consumed(buffered int64) {
	q.mu.Lock()
	q.len = buffered
	q.mu.Unlock()
}

// figures returns qbuf and qbuf-free at now.
func (q *queryBuf) figures(now int64) (used, free int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.advance(now)
	return q.len, q.alloc - q.len
}

// recentMax is the largest input usage of the last seconds, as the cron
// sampled it (client_recent_max_input_buffer's share of this client).
func (q *queryBuf) recentMax(now int64) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.advance(now)
	m, sec := int64(0), now/int64(time.Second)
	for _, s := range q.slots {
		if s.sec > sec-qbSlots+1 {
			m = max(m, s.max)
		}
	}
	return m
}

// commandInput returns a command's size in RESP and its last argument of
// 32 KB or more (0 if none), for queryBuf.read.
func commandInput(argv [][]byte) (wire, bigArg int64) {
	wire = digits(len(argv)) + 3 // *N\r\n
	for _, a := range argv {
		wire += digits(len(a)) + 5 + int64(len(a)) // $L\r\n...\r\n
		if len(a) >= protoMBulkBigArg {
			bigArg = int64(len(a))
		}
	}
	return wire, bigArg
}

func digits(n int) int64 {
	d := int64(1)
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// argvMem is Redis's argv_len_sum: the bytes of a command's arguments.
func argvMem(argv [][]byte) int64 {
	n := int64(0)
	for _, a := range argv {
		n += int64(len(a))
	}
	return n
}
