package command

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Long scripts: lua-time-limit (busy-reply-threshold), BUSY and SCRIPT
// KILL, as in Redis 7.0.
//
// A script the leader applies for a client runs in the shard's apply loop,
// so every write waits for it. Once it has run longer than the time limit
// the server is busy: the connections answer other clients' commands BUSY
// (but for the few Redis allows, flagged AllowBusy) and withdraw the writes
// queued behind the script, answering BUSY for them too, so that nobody
// waits on a script that may never end. SCRIPT KILL stops the script if it
// has written nothing yet; otherwise only SHUTDOWN NOSAVE can, and the
// shard then drops the script's record unlogged (shard.Halt). Read-only
// scripts (EVAL_RO, no-writes) run on a read view in their client's
// goroutine: they hold up nobody else, so they never make the server busy,
// but SCRIPT KILL stops them too once they pass the limit.
//
// Determinism. Whether and where a script is stopped depends on timing, so
// it must never reach the log: replicas apply logged records without any
// time limit, and only the leader, applying a client's record (a live
// run), may stop a script. A script is stopped only if it wrote nothing:
// SCRIPT KILL checks that under the lock redis.call holds while a command
// runs, and a killed script can run no further command. Its command in the
// record is then rewritten into a script that only returns the error the
// client got (killedScript), so the log never holds a script that was
// stopped: a killed EVAL changes nothing and is not logged at all, and in
// an EXEC the commands around it apply on replicas as they did on the
// leader, since the killed script changed nothing they could see. A script
// in the log therefore ran to its end on the leader, and runs to the same
// end on every replica.

// scriptRun is a script in progress that SCRIPT KILL may stop.
type scriptRun struct {
	start time.Time
	ctx   *killCtx // the context its VM checks, for run gen
	gen   uint64

	// mu is held by redis.call while a command runs and by SCRIPT KILL.
	mu     sync.Mutex
	dirty  bool // it called a write command or changed the data
	killed bool
	why    string // the error a killed run answers

	heapAt uint64 // the lowest Go heap the memory watch saw during the run (under scriptRuns)
}

// Redis's replies.
const (
	ErrBusy       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errNotBusy    = "NOTBUSY No scripts in execution right now."
	errUnkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errKilled     = "ERR Script killed by user with SCRIPT KILL..."
)

var scriptRuns struct {
	sync.Mutex
	runs  []*scriptRun // oldest first
	live  *scriptRun
	timer *time.Timer // fires when the live script reaches the limit
	mem   *time.Timer // the memory watch (script_memory.go)
}

var (
	scriptLimit atomic.Int64 // lua-time-limit, ms
	scriptBusy  atomic.Bool  // the live script passed the limit
	// busyC is closed when the live script passes the limit, and replaced
	// by a new channel when it ends.
	busyC atomic.Pointer[chan struct{}]
)

func init() {
	scriptLimit.Store(5000)
	ch := make(chan struct{})
	busyC.Store(&ch)
}

// SetScriptTimeLimit sets lua-time-limit (milliseconds) for the scripts
// started from now on.
func SetScriptTimeLimit(ms int64) { scriptLimit.Store(ms) }

// ScriptBusy reports whether a script in the apply loop has run past the
// time limit: commands other than AllowBusy ones are answered ErrBusy.
func ScriptBusy() bool { return scriptBusy.Load() }

// ScriptBusyC returns a channel that is closed while a script in the apply
// loop has run past the time limit: a connection waiting for a write
// selects on it to withdraw the write (shard.Proposal.Withdraw).
func ScriptBusyC() <-chan struct{} { return *busyC.Load() }

func limitDuration() time.Duration {
	ms := scriptLimit.Load()
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// startRun registers a killable run; a live one (in the apply loop, where
// writes wait for it) makes the server busy once past the limit.
func startRun(live bool, ctx *killCtx) *scriptRun {
	r := &scriptRun{start: time.Now(), ctx: ctx, gen: ctx.begin()}
	scriptRuns.Lock()
	defer scriptRuns.Unlock()
	scriptRuns.runs = append(scriptRuns.runs, r)
	watchScriptMemory()
	if live {
		scriptRuns.live = r
		if scriptRuns.timer == nil {
			scriptRuns.timer = time.AfterFunc(limitDuration(), markBusy)
		} else {
			scriptRuns.timer.Reset(limitDuration())
		}
	}
	return r
}

// markBusy makes the server busy if the live script has reached the
// limit (the timer may fire late for a script that has ended since).
func markBusy() {
	scriptRuns.Lock()
	defer scriptRuns.Unlock()
	r := scriptRuns.live
	if r != nil && !scriptBusy.Load() && time.Since(r.start) >= limitDuration() {
		scriptBusy.Store(true)
		close(*busyC.Load())
	}
}

// endRun unregisters r, ending the busy state if r caused it.
func endRun(r *scriptRun) {
	r.ctx.end()
	scriptRuns.Lock()
	defer scriptRuns.Unlock()
	if i := slices.Index(scriptRuns.runs, r); i >= 0 {
		scriptRuns.runs = slices.Delete(scriptRuns.runs, i, i+1)
	}
	if scriptRuns.live == r {
		scriptRuns.live = nil
		scriptRuns.timer.Stop()
		if scriptBusy.Load() {
			ch := make(chan struct{})
			busyC.Store(&ch)
			scriptBusy.Store(false)
		}
	}
}

// KillScript is SCRIPT KILL. Redis reads it only once the script has run
// past the time limit, so a script still within it is waited for: it is
// killed when it reaches the limit, unless it ends first. Every script
// past the limit is stopped, if it wrote nothing.
func KillScript() string {
	for {
		scriptRuns.Lock()
		runs := slices.Clone(scriptRuns.runs)
		scriptRuns.Unlock()
		if len(runs) == 0 {
			return errNotBusy
		}
		limit := limitDuration()
		wait := time.Duration(-1)
		var due []*scriptRun
		for _, r := range runs {
			left := limit - time.Since(r.start)
			if left <= 0 {
				due = append(due, r)
			} else if wait < 0 || left < wait {
				wait = left
			}
		}
		if len(due) == 0 {
			time.Sleep(min(wait, 10*time.Millisecond)) // and look again: it may end
			continue
		}
		killed := false
		for _, r := range due {
			if r.kill(false) {
				killed = true
			}
		}
		if !killed {
			return errUnkillable
		}
		return "" // OK
	}
}

// StopScripts stops every script in progress, written or not (SHUTDOWN
// NOSAVE, and shutdown while a script runs). A live script stopped after
// writing must not be logged: the caller halts the shard first. It reports
// whether the apply loop was running a script.
func StopScripts() bool {
	scriptRuns.Lock()
	runs := slices.Clone(scriptRuns.runs)
	live := scriptRuns.live != nil
	scriptRuns.Unlock()
	for _, r := range runs {
		r.kill(true)
	}
	return live
}

// LiveScript reports whether the apply loop is running a script.
func LiveScript() bool {
	scriptRuns.Lock()
	defer scriptRuns.Unlock()
	return scriptRuns.live != nil
}

// kill stops r unless it wrote (force stops it anyway); it reports whether
// r is stopped.
func (r *scriptRun) kill(force bool) bool { return r.killWith(force, errKilled) }

// killWith is kill with the error the script answers.
func (r *scriptRun) killWith(force bool, why string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirty && !force {
		return false
	}
	if !r.killed {
		r.why = why
	}
	r.killed = true
	r.ctx.cancel(r.gen) // the Lua VM raises at its next instruction
	return true
}

// killCtx is the context.Context the VM of a killable run checks at every
// instruction. Each luaEnv has one for all its runs, so that a run
// allocates no context: its Done channel is replaced only after a kill
// closed it. Runs are numbered, so that a kill meant for a run that has
// ended (KillScript works on a copy of the list) leaves the next alone.
//
// Coroutines get contexts of their own (context.WithCancel of this one),
// which register through AfterFunc: the context package then starts no
// goroutine to watch Done, which a coroutine left suspended would leak. A
// run's registrations are dropped when it ends.
type killCtx struct {
	done chan struct{} // replaced by begin only, on the env's goroutine

	mu    sync.Mutex
	gen   uint64 // the run in progress, if odd
	err   error  // context.Canceled once done is closed
	after map[uint64]func()
	next  uint64 // key of the next AfterFunc
}

func newKillCtx() *killCtx { return &killCtx{done: make(chan struct{})} }

// begin starts a run and returns its number.
func (k *killCtx) begin() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		k.done, k.err = make(chan struct{}), nil
	}
	k.gen++
	return k.gen
}

// end ends the run in progress: a late kill no longer reaches it.
func (k *killCtx) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	clear(k.after)
}

// cancel stops run gen if it is still in progress.
func (k *killCtx) cancel(gen uint64) {
	k.mu.Lock()
	if gen != k.gen || k.err != nil {
		k.mu.Unlock()
		return
	}
	k.err = context.Canceled
	close(k.done)
	fns := make([]func(), 0, len(k.after))
	for _, f := range k.after {
		fns = append(fns, f)
	}
	clear(k.after)
	k.mu.Unlock()
	for _, f := range fns { // they cancel contexts: order does not matter
		f()
	}
}

func (k *killCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (k *killCtx) Done() <-chan struct{}       { return k.done }
func (k *killCtx) Value(any) any               { return nil }

func (k *killCtx) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// AfterFunc runs f once the run is killed (the context package's hook for
// the contexts derived from this one).
func (k *killCtx) AfterFunc(f func()) (stop func() bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		go f()
		return func() bool { return false }
	}
	if k.after == nil {
		k.after = map[uint64]func(){}
	}
	id := k.next
	k.next++
	k.after[id] = f
	return func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		_, ok := k.after[id]
		delete(k.after, id)
		return ok
	}
}
