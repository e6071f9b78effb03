package raftlog

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Releaser lets go of the large batches Pebble keeps after flushing them.
//
// Pebble takes a batch over half a memtable as a memtable of its own. Once
// it is flushed, Pebble drops it from its memtable queue by reslicing
// (queue = queue[n:] in pebble v2.1's compaction.go), so the queue's array
// still holds the batch until memtable rotations reallocate the array: a
// 100 MB SET stayed live twice over, in the log's batch and the store's,
// until later writes had filled a few memtables. A few forced flushes
// after such a batch rotate the queue past it; flushing an empty memtable
// writes nothing, and nothing synced is touched. One goroutine per DB
// runs them, so a stream of big writes costs at most three flushes at a
// time.
type Releaser struct {
	db   *pebble.DB
	min  int // about the batch size Pebble takes as a memtable of its own
	kick chan struct{}
	stop chan struct{} // Close: a round waiting on a flush (a full disk) gives up
	done chan struct{}
	once sync.Once
}

// releaseFlushes is how many forced flushes rotate the queue past a large
// batch: its own, then enough to outgrow the array's spare room.
const releaseFlushes = 3

// NewReleaser starts the releaser of db, opened with memTableSize; Close
// must stop it before db closes.
func NewReleaser(db *pebble.DB, memTableSize int) *Releaser {
	r := &Releaser{db: db, min: memTableSize / 2, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

// Committed is told the size of each batch committed to db.
func (r *Releaser) Committed(size int) {
	if r == nil || size < r.min {
		return
	}
	select {
	case r.kick <- struct{}{}:
	default: // a round is due already
	}
}

func (r *Releaser) run() {
	defer close(r.done)
	for {
		select {
		case <-r.kick:
		case <-r.stop:
			return
		}
		for range releaseFlushes {
			if !r.idle() {
				return
			}
			flushed, err := r.db.AsyncFlush()
			if err != nil { // a failing disk: the writes say so
				break
			}
			select {
			case <-flushed:
			case <-r.stop:
				return
			}
		}
	}
}

// idle waits for the memtables before the mutable one to be flushed: a
// forced flush asked for sooner would wait for them holding Pebble's commit
// lock, and with a failing disk never return. It reports false once Close
// is called.
func (r *Releaser) idle() bool {
	for r.db.Metrics().MemTable.Count > 1 {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.stop:
			return false
		}
	}
	return true
}

// Close stops the releaser; no flush is asked for once it returns.
func (r *Releaser) Close() {
	if r == nil {
		return
	}
	r.once.Do(func() { close(r.stop) })
	<-r.done
}
