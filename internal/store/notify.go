package store

import (
	"bytes"
	"errors"
)

// Keyspace notifications (notify-keyspace-events). A write Tx collects the
// events its records raise while they are applied, in order, and hands
// them to the store's listener once it commits: never for a batch that is
// dropped, so a subscriber only hears of committed writes. Every node
// applies the same records, so every node raises the same events for its
// own subscribers. With notifications off (the default) a Tx collects
// nothing: Notify returns at its first test.

// NotifyFlags are the classes of notify-keyspace-events, with Redis's bit
// values.
type NotifyFlags uint32

const (
	NotifyKeyspace NotifyFlags = 1 << iota // K: __keyspace@<db>__:<key> channels
	NotifyKeyevent                         // E: __keyevent@<db>__:<event> channels
	NotifyGeneric                          // g: DEL, EXPIRE, RENAME...
	NotifyString                           // $
	NotifyList                             // l
	NotifySet                              // s
	NotifyHash                             // h
	NotifyZSet                             // z
	NotifyExpired                          // x: a key expired
	NotifyEvicted                          // e: never raised (nothing is evicted)
	NotifyStream                           // t
	NotifyKeyMiss                          // m: a read found no key
	notifyLoaded                           // (modules only)
	NotifyModule                           // d: JSON commands
	NotifyNew                              // n: a key was added
)

// NotifyAll is "A": every class but m and n.
const NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash | NotifyZSet |
	NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule

var notifyLetters = []struct {
	c byte
	f NotifyFlags
}{
	{'g', NotifyGeneric}, {'$', NotifyString}, {'l', NotifyList}, {'s', NotifySet},
	{'h', NotifyHash}, {'z', NotifyZSet}, {'x', NotifyExpired}, {'e', NotifyEvicted},
	{'t', NotifyStream}, {'d', NotifyModule}, {'n', NotifyNew},
	{'K', NotifyKeyspace}, {'E', NotifyKeyevent}, {'m', NotifyKeyMiss},
}

// ErrNotifyClass is Redis's error for a bad notify-keyspace-events value.
var ErrNotifyClass = errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")

// ParseNotifyFlags reads a notify-keyspace-events value.
func ParseNotifyFlags(s string) (NotifyFlags, error) {
	var f NotifyFlags
	for i := 0; i < len(s); i++ {
		if s[i] == 'A' {
			f |= NotifyAll
			continue
		}
		found := false
		for _, l := range notifyLetters {
			if l.c == s[i] {
				f |= l.f
				found = true
				break
			}
		}
		if !found {
			return 0, ErrNotifyClass
		}
	}
	return f, nil
}

// String is the value as CONFIG GET shows it, in Redis's order: "A" (which
// then hides n, as in Redis) or the classes, then K, E and m.
func (f NotifyFlags) String() string {
	var b []byte
	all := f&NotifyAll == NotifyAll
	if all {
		b = append(b, 'A')
	}
	for _, l := range notifyLetters {
		class := l.f&(NotifyKeyspace|NotifyKeyevent|NotifyKeyMiss) == 0
		if f&l.f != 0 && !(all && class) {
			b = append(b, l.c)
		}
	}
	return string(b)
}

// Event is one keyspace notification: event name happened to key in
// logical database DB. With Publish set it is a PUBLISH applied from the
// log instead (see Tx.Publish): Key is the channel, Name the message, and
// Receivers, if not nil, is told how many subscribers got it.
type Event struct {
	DB        int
	Name      string
	Key       []byte
	Publish   bool
	Receivers func(n int)
}

// Publish queues a message for the subscribers of channel, delivered when
// the Tx commits, after the events raised before it (PUBLISH in a cluster
// is a record: a subscriber hears of a write before a message published
// after it, as in Redis). receivers, if not nil, is called with the number
// of subscribers that got it, as it is delivered.
func (t *Tx) Publish(channel, message []byte, receivers func(n int)) {
	t.events = append(t.events, Event{Name: string(message), Key: bytes.Clone(channel), Publish: true, Receivers: receivers})
	t.published++
}

// Published counts the messages queued by Publish so far: a record that
// published one must be logged even if it wrote nothing.
func (t *Tx) Published() int { return t.published }

// NotifyListener receives the events (and published messages) of a
// committed batch, with the flags they were collected under.
type NotifyListener func(flags NotifyFlags, events []Event)

// SetNotify sets the notification flags for the batches started from now
// on, and the listener of committed events.
func (s *Store) SetNotify(f NotifyFlags, l NotifyListener) {
	if f&(NotifyKeyspace|NotifyKeyevent) == 0 {
		f = 0 // no channel to publish on: nothing to collect
	}
	s.notifyMu.Lock()
	s.notifyFn = l
	s.notifyMu.Unlock()
	s.notify.Store(uint32(f))
}

// Notify raises event name of class for key in the Tx's current database,
// if that class is wanted.
func (t *Tx) Notify(class NotifyFlags, name string, key []byte) {
	t.NotifyIn(t.DB, class, name, key)
}

// NotifyIn is Notify for a key of logical database db (COPY ... DB, MOVE).
func (t *Tx) NotifyIn(db int, class NotifyFlags, name string, key []byte) {
	if t.notify&class == 0 {
		return
	}
	t.events = append(t.events, Event{DB: db, Name: name, Key: bytes.Clone(key)})
}

// NotifyOn reports whether events of class are collected, for callers that
// would have to work to find out which events to raise.
func (t *Tx) NotifyOn(class NotifyFlags) bool { return t.notify&class != 0 }

// KeyMiss turns "keymiss" events for the Lookups that follow on or off and
// returns the previous setting. Redis raises them for the lookups of read
// commands: a read Tx starts with them on, the apply loop turns them on
// for a read command (inside MULTI or a script).
func (t *Tx) KeyMiss(on bool) (prev bool) {
	prev, t.keyMiss = t.keyMiss, on
	return prev
}

// Overwrite deletes key for a command that writes a new value in its place
// at once (SINTERSTORE, ZUNIONSTORE...): for notifications the key is then
// overwritten, not new, as Redis replaces the value in place. It reports
// whether a live key was there.
func (t *Tx) Overwrite(key []byte) bool {
	ok := t.Delete(key)
	if ok && t.notify&NotifyNew != 0 {
		t.overwriting, t.overwrite = append(t.overwriting[:0], key...), true
	}
	return ok
}

// noteCreated raises the events of Put on key: "expired" when it replaces
// an expired value, "new" when the key did not exist (or had expired).
func (t *Tx) noteCreated(key []byte, existed, expired bool) {
	if t.notify == 0 {
		return
	}
	if expired {
		t.Notify(NotifyExpired, "expired", key)
	}
	overwrite := t.overwrite && bytes.Equal(t.overwriting, key)
	t.overwrite = false
	if (!existed || expired) && !overwrite {
		t.Notify(NotifyNew, "new", key)
	}
}

// deliverEvents hands a committed batch's events to the listener.
func (t *Tx) deliverEvents() {
	if len(t.events) == 0 {
		return
	}
	t.st.notifyMu.Lock()
	fn := t.st.notifyFn
	t.st.notifyMu.Unlock()
	if fn != nil {
		fn(t.notify, t.events)
	}
	t.events = nil
}
