package shard

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Blocking commands (BLPOP, BZPOPMIN, BLMOVE...). A client's blocking
// command is proposed as an ordinary record with Run.Block set. If it finds
// nothing, the applier says which keys it waits for (Run.BlockedOn) and
// writes no reply; the proposal then waits here instead of completing.
//
// When a later record touches one of those keys, the apply loop retries the
// waiting records right after it, in the same group and in the order the
// clients blocked, each as a new record with its own index, time and seed:
// the log stays the whole story, so replicas and replay agree, and the first
// client blocked is the first served, as in Redis.

const (
	waiting int32 = iota
	serving
	served
	cancelled
)

type waiter struct {
	p     *Proposal
	ids   []string
	state atomic.Int32
}

// blocked is the registry of waiting proposals by key. The apply loop reads
// and changes it; a client whose wait ends (timeout, disconnect) removes
// its waiter through Cancel.
type blocked struct {
	mu    sync.Mutex
	byKey map[string][]*waiter
	n     atomic.Int64 // waiters registered, for the fast path
}

func (b *blocked) add(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byKey == nil {
		b.byKey = map[string][]*waiter{}
	}
	for _, id := range w.ids {
		b.byKey[id] = append(b.byKey[id], w)
	}
	b.n.Add(1)
}

func (b *blocked) remove(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range w.ids {
		list := b.byKey[id]
		for i, x := range list {
			if x == w {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(b.byKey, id)
		} else {
			b.byKey[id] = list
		}
	}
	b.n.Add(-1)
}

func (b *blocked) has(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byKey[id]) > 0
}

// inDBs appends to ids the keys of databases a and b that have waiters,
// those ids already holds aside.
func (b *blocked) inDBs(ids []string, a, c int) []string {
	pa, pc := strconv.Itoa(a)+":", strconv.Itoa(c)+":"
	b.mu.Lock()
	defer b.mu.Unlock()
	from := len(ids)
	for id := range b.byKey {
		if (strings.HasPrefix(id, pa) || strings.HasPrefix(id, pc)) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids[from:]) // not map order: the retries are records in the log
	return ids
}

// on returns the waiters on id, oldest first.
func (b *blocked) on(id string) []*waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*waiter(nil), b.byKey[id]...)
}

// BlockHandle lets the client that proposed a blocking record give up.
type BlockHandle struct {
	s *Shard
	p *Proposal
}

// Cancel withdraws a blocked proposal (timeout, disconnect). It reports
// false if the apply loop has it in hand: then p.Done comes as usual, with
// the reply, or with no reply at all if the record would have blocked (it
// is then withdrawn too).
func (h BlockHandle) Cancel() bool {
	h.s.blockMu.Lock()
	w := h.s.waiters[h.p]
	if w == nil {
		// Not blocked (yet): being applied, or served already.
		h.p.cancelled = true
		h.s.blockMu.Unlock()
		return false
	}
	h.s.blockMu.Unlock()
	if !w.state.CompareAndSwap(waiting, cancelled) {
		return false
	}
	h.s.forget(w)
	return true
}

// Blocking returns a handle for a proposal with Run.Block set.
func (s *Shard) Blocking(p *Proposal) BlockHandle { return BlockHandle{s, p} }

// BlockedCount is the number of blocking commands waiting for a write
// (INFO's blocked_clients).
func (s *Shard) BlockedCount() int64 { return s.blocked.n.Load() }

func (s *Shard) forget(w *waiter) {
	s.blocked.remove(w)
	s.blockMu.Lock()
	delete(s.waiters, w.p)
	s.blockMu.Unlock()
}

// block registers a proposal whose record found nothing to serve. It
// reports false if the client withdrew it meanwhile: it is then done, with
// no reply.
func (s *Shard) block(p *Proposal) bool {
	w := &waiter{p: p}
	for _, k := range p.Run.BlockedOn {
		w.ids = append(w.ids, watchID(p.Rec.DB, k))
	}
	s.blockMu.Lock()
	if p.cancelled {
		s.blockMu.Unlock()
		return false
	}
	s.waiters[p] = w
	s.blockMu.Unlock()
	s.blocked.add(w)
	return true
}

// serveBlocked retries the waiters on the keys touched so far, oldest first,
// as new records of the group. It returns the proposals it completed.
func (s *Shard) serveBlocked(apply func(p *Proposal) bool) []*Proposal {
	var done []*Proposal
	for len(s.wake) > 0 {
		id := s.wake[0]
		s.wake = s.wake[1:]
		// The waiters on this key, oldest first. When one finds nothing,
		// the later ones running the same command find nothing either;
		// others (an XREADGROUP behind an XREAD) may still be answered.
		nothingFor := map[string]bool{}
		for _, w := range s.blocked.on(id) {
			name := strings.ToLower(string(w.p.Rec.Cmds[0][0]))
			if nothingFor[name] || !w.state.CompareAndSwap(waiting, serving) {
				continue // cancelled or served meanwhile
			}
			w.p.Run.BlockedOn = nil
			w.p.Run.Retry = true
			w.p.Rec.Time = 0 // a retry is a new record with its own time
			if !apply(w.p) {
				w.state.Store(waiting)
				nothingFor[name] = true
				continue
			}
			w.state.Store(served)
			s.forget(w)
			done = append(done, w.p)
		}
	}
	return done
}

// releaseBlocked ends every blocked call with err: the node stopped leading,
// so their clients must retry where the writes now go.
func (s *Shard) releaseBlocked(err error) {
	s.blockMu.Lock()
	var ws []*waiter
	for _, w := range s.waiters {
		ws = append(ws, w)
	}
	s.blockMu.Unlock()
	for _, w := range ws {
		if w.state.CompareAndSwap(waiting, served) {
			s.forget(w)
			reply(w.p, err)
		}
	}
}
