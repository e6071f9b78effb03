// Package shard turns writes into records, puts them in the log in one order,
// applies them one at a time and makes each group durable with one sync.
package shard

import (
	"encoding/binary"
	"errors"
)

// Kind says how a record is applied.
type Kind byte

const (
	KindCommand   Kind = iota + 1 // one client command
	KindExec                      // MULTI/EXEC: commands applied together, WATCH checked first
	KindExpire                    // active expiry: delete the listed keys that are past their expiry
	KindAborted                   // an EXEC whose WATCH failed: logged, applies nothing
	KindPublish                   // PUBLISH in a cluster: each node delivers Cmds[0] = {channel, message[, origin]} to its subscribers
	KindExpireDue                 // active expiry: Cmds[0] lists expiry index entries that are due (store.Tx.ExpireDue)
	KindACL                       // the ACL users after ACL SETUSER, DELUSER or LOAD: Cmds[0][0] is their ACL file
	KindTopology                  // the cluster's topology, in the metadata group: Cmds[0][0] is its JSON
)

// Record is one entry of the log: everything needed to apply a write
// deterministically. Applying the same records to an empty store gives the
// same state, so replicas only need the log.
type Record struct {
	Index uint64
	Kind  Kind
	DB    int
	Time  int64  // the leader's clock (unix ms): TTLs, expiry checks
	Seed  uint64 // randomness (SPOP, SRANDMEMBER...) comes from here
	Cmds  [][][]byte
	Watch []WatchKey
	// Published is what PUBLISH answered inside the record's scripts, in
	// order: the leader counts its subscribers as it applies the record,
	// and a follower or a replay answers the scripts the same counts. Logged
	// (only when not empty, so other records keep their form).
	Published []int64
	// StreamNode is the leader's stream node limits when it applied the
	// record, read at its first stream write: followers and replays cut
	// stream nodes where the leader did. Logged only when they are not
	// the defaults (nil on a record from the log that has none).
	StreamNode *StreamNodeMax
	// ACL is the rules (ACL LIST's form) of the user whose script the
	// record runs, when that user may not run everything: each redis.call
	// is checked against them, so every replica refuses the same calls.
	// Logged only when set.
	ACL string
}

// Run is what the leader's application of a record for its client asks and
// leaves beside the reply. None of it is logged: a follower or a replay
// applies the record with no Run, and must change the same data.
type Run struct {
	// Command is the *command.Command the client looked up for a command
	// record (nil: the applier looks it up).
	Command any

	// Block is set by a client for a blocking command outside MULTI: if
	// the command finds nothing, the applier sets BlockedOn to the keys it
	// waits for instead of replying (a record that blocked changed
	// nothing).
	Block     bool
	BlockedOn [][]byte
	// Retry is set when the apply loop runs a blocked record again: a
	// command may answer differently then (XREADGROUP's "the stream key no
	// longer exists"), but must change the same data.
	Retry bool

	// ConnAt is filled while applying an EXEC: the reply offsets where the
	// replies of queued connection commands (CLIENT SETNAME...) belong.
	ConnAt []int
	// Receivers is filled when the batch of an EXEC commits: for each
	// PUBLISH in it that went through the log (in a cluster), how many of
	// this node's subscribers got the message.
	Receivers []int
}

// StreamNodeMax is stream-node-max-entries and stream-node-max-bytes: where
// a stream's nodes end, and so what XADD and XTRIM with ~ trim.
type StreamNodeMax struct{ Entries, Bytes int64 }

// DefaultStreamNodeMax is Redis's defaults, which a record that logs no
// StreamNode applies with.
var DefaultStreamNodeMax = StreamNodeMax{Entries: 100, Bytes: 4096}

// WatchKey is a key an EXEC is conditional on: Index is the applied index
// when WATCH ran; Live says the key existed then (so its expiry since counts
// as a change, as in Redis); Expired that it was there but past its expiry
// (so its removal since is no change, as in Redis).
type WatchKey struct {
	DB      int
	Key     []byte
	Index   uint64
	Live    bool
	Expired bool
}

// The state of a watched key at WATCH, one byte in the log.
const (
	watchAbsent  = 0
	watchLive    = 1
	watchExpired = 2
)

const recordVersion = 1

// recordHeaderMax is about what a small record's log form takes beyond its
// arguments' bytes, with the room for its length in an entry: length,
// version, kind, DB, time, seed and counts.
const recordHeaderMax = binary.MaxVarintLen64 + 2 + 2 + binary.MaxVarintLen64 + 8 + 3

// Marshal appends the record's log form to buf. Index is not stored: it is
// the log position.
func (r *Record) Marshal(buf []byte) []byte {
	buf = append(buf, recordVersion, byte(r.Kind))
	buf = binary.AppendUvarint(buf, uint64(r.DB))
	buf = binary.AppendVarint(buf, r.Time)
	buf = binary.BigEndian.AppendUint64(buf, r.Seed)
	buf = binary.AppendUvarint(buf, uint64(len(r.Cmds)))
	for _, argv := range r.Cmds {
		buf = binary.AppendUvarint(buf, uint64(len(argv)))
		for _, a := range argv {
			buf = binary.AppendUvarint(buf, uint64(len(a)))
			buf = append(buf, a...)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(r.Watch)))
	for _, w := range r.Watch {
		buf = binary.AppendUvarint(buf, uint64(w.DB))
		buf = binary.AppendUvarint(buf, uint64(len(w.Key)))
		buf = append(buf, w.Key...)
		buf = binary.AppendUvarint(buf, w.Index)
		state := byte(watchAbsent)
		switch {
		case w.Live:
			state = watchLive
		case w.Expired:
			state = watchExpired
		}
		buf = append(buf, state)
	}
	// Optional tail: the published counts, then the stream node limits,
	// then the ACL (each after the ones before it, defaults if need be).
	node := r.StreamNode != nil && *r.StreamNode != DefaultStreamNodeMax
	if len(r.Published) > 0 || node || r.ACL != "" {
		buf = binary.AppendUvarint(buf, uint64(len(r.Published)))
		for _, n := range r.Published {
			buf = binary.AppendVarint(buf, n)
		}
	}
	if node || r.ACL != "" {
		sn := DefaultStreamNodeMax
		if node {
			sn = *r.StreamNode
		}
		buf = binary.AppendUvarint(buf, uint64(sn.Entries))
		buf = binary.AppendUvarint(buf, uint64(sn.Bytes))
	}
	if r.ACL != "" {
		buf = binary.AppendUvarint(buf, uint64(len(r.ACL)))
		buf = append(buf, r.ACL...)
	}
	return buf
}

var errBadRecord = errors.New("shard: malformed record")

// Unmarshal parses a record; the record's slices alias data.
func Unmarshal(data []byte) (*Record, error) {
	d := decoder{b: data}
	if d.byte() != recordVersion {
		return nil, errBadRecord
	}
	r := &Record{Kind: Kind(d.byte())}
	r.DB = int(d.uvarint())
	r.Time = d.varint()
	r.Seed = d.uint64()
	r.Cmds = make([][][]byte, d.count())
	for i := range r.Cmds {
		argv := make([][]byte, d.count())
		for j := range argv {
			argv[j] = d.bytes()
		}
		r.Cmds[i] = argv
	}
	r.Watch = make([]WatchKey, d.count())
	for i := range r.Watch {
		r.Watch[i] = WatchKey{DB: int(d.uvarint()), Key: d.bytes(), Index: d.uvarint()}
		state := d.byte()
		r.Watch[i].Live, r.Watch[i].Expired = state == watchLive, state == watchExpired
	}
	if len(d.b) > 0 {
		r.Published = make([]int64, d.count())
		for i := range r.Published {
			r.Published[i] = d.varint()
		}
	}
	if len(d.b) > 0 {
		r.StreamNode = &StreamNodeMax{Entries: int64(d.uvarint()), Bytes: int64(d.uvarint())}
	}
	if len(d.b) > 0 {
		if r.ACL = string(d.bytes()); r.ACL == "" {
			d.fail() // written only when set
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadRecord
	}
	return r, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errBadRecord, nil }

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// count reads a length that must fit in what is left of the input, so a
// corrupt record cannot make us allocate a huge slice.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}
