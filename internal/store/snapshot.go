package store

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Raft snapshots of the whole store. The leader pins a Snapshot at its
// applied index and streams Dumps of it to the members that need one; a
// member writes the stream to sstables (WriteSnapshotTables) and replaces
// its store with them in one step (InstallSnapshot).
//
// A dump is every Pebble entry in key order, each as a uvarint key length,
// the key, a uvarint value length and the value. The shard's applied index
// is one of the entries, so installing a dump sets it with the data.

// Snapshot is a consistent view of the whole store that stays readable while
// the store moves on.
type Snapshot struct{ snap *pebble.Snapshot }

// Snapshot pins the store as it is now. Close releases it.
func (s *Store) Snapshot() *Snapshot { return &Snapshot{s.pdb.NewSnapshot()} }

// Close releases the snapshot. Dumps opened on it stay readable.
func (sn *Snapshot) Close() error { return sn.snap.Close() }

// Dump is an open read of a whole Snapshot.
type Dump struct{ it *pebble.Iterator }

// Dump opens a read of the snapshot. What it reads is fixed when it is
// opened: an install that replaces the store afterwards (InstallSnapshot
// removes data even from open snapshots) does not change it.
func (sn *Snapshot) Dump() (*Dump, error) {
	it, err := sn.snap.NewIter(nil)
	if err != nil {
		return nil, err
	}
	return &Dump{it}, nil
}

// Close releases the dump's iterator.
func (d *Dump) Close() error { return d.it.Close() }

// WriteTo writes the dump to w and returns how many bytes it wrote.
func (d *Dump) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	var hdr []byte
	for d.it.First(); d.it.Valid(); d.it.Next() {
		v, err := d.it.ValueAndErr()
		if err != nil {
			return n, err
		}
		k := d.it.Key()
		hdr = binary.AppendUvarint(hdr[:0], uint64(len(k)))
		bw.Write(hdr)
		bw.Write(k)
		hdr = binary.AppendUvarint(hdr[:0], uint64(len(v)))
		bw.Write(hdr)
		if _, err := bw.Write(v); err != nil {
			return n, err
		}
		n += int64(2*len(hdr) + len(k) + len(v)) // close enough for a log line
	}
	if err := d.it.Error(); err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// snapshotTableSize is how many bytes of entries go to one sstable of a
// received snapshot.
const snapshotTableSize = 64 << 20

// maxDumpField bounds a key or value read from a dump: a stored entry is
// at most a few KB (collections and long strings are stored member by
// member), so anything larger is a corrupt stream.
const maxDumpField = 64 << 20

// WriteSnapshotTables reads a dump from r and writes it to sstables in dir
// (which must exist), each synced; memory stays at a few blocks whatever
// the dump's size. It returns the number of entries.
func (s *Store) WriteSnapshotTables(r io.Reader, dir string) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	wopts := s.opts.MakeWriterOptions(0, s.pdb.TableFormat())
	var (
		w             *sstable.Writer
		tables, bytes int
		entries       int64
		key, val      []byte
	)
	finish := func() error {
		if w == nil {
			return nil
		}
		err := w.Close() // syncs and closes the file
		w = nil
		return err
	}
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	for {
		var err error
		key, err = readField(br, key, true)
		if err == io.EOF {
			break
		}
		if err != nil {
			return entries, err
		}
		if val, err = readField(br, val, false); err != nil {
			return entries, err
		}
		if w == nil {
			tables++
			f, err := vfs.Default.Create(filepath.Join(dir, fmt.Sprintf("%06d.sst", tables)), vfs.WriteCategoryUnspecified)
			if err != nil {
				return entries, err
			}
			w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), wopts)
			bytes = 0
		}
		if err := w.Set(key, val); err != nil {
			return entries, err
		}
		entries++
		if bytes += len(key) + len(val); bytes >= snapshotTableSize {
			if err := finish(); err != nil {
				return entries, err
			}
		}
	}
	return entries, finish()
}

// readField reads one length-prefixed field of a dump into buf. A clean
// end of the dump before a key is io.EOF.
func readField(r *bufio.Reader, buf []byte, isKey bool) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF && isKey {
			return buf, io.EOF
		}
		return buf, fmt.Errorf("store: truncated dump: %w", err)
	}
	if n > maxDumpField {
		return buf, errors.New("store: malformed dump")
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, fmt.Errorf("store: truncated dump: %w", err)
	}
	return buf, nil
}

// InstallSnapshot replaces the whole store with the sstables in dir
// (written by WriteSnapshotTables from a dump at index applied),
// in one atomic step: Pebble excises every key and ingests the tables
// together, so a crash leaves either the old store or the new one. The
// tables are linked into the store, not moved: dir can be removed after.
// The apply loop must be the caller, with no write Tx open. Data in open
// Snapshots is removed too; open Dumps and iterators keep theirs.
//
// Readers see the old store or the new one: the install waits for the
// read Txs open to close, and the reads that start meanwhile wait for it
// (Store.installing) until the cache, the database map and the counts
// are the new store's too.
func (s *Store) InstallSnapshot(dir string, applied uint64) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var paths []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sst") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return errors.New("store: the snapshot has no tables")
	}
	// Flushed first, so that the ingest need not wait for a flush while
	// reads wait for it.
	if err := s.pdb.Flush(); err != nil {
		return err
	}
	all := pebble.KeyRange{Start: []byte{0}, End: []byte{0xff, 0xff, 0xff, 0xff}}
	s.installing.Lock()
	defer s.installing.Unlock()
	if _, err := s.pdb.IngestAndExcise(context.Background(), paths, nil, nil, all); err != nil {
		return err
	}
	s.due.reset()
	s.funcs.reset()
	s.aclGen.Add(1)
	if err := s.load(); err != nil {
		return err
	}
	if got, err := s.AppliedIndex(); err != nil || got != applied {
		return fmt.Errorf("store: the snapshot's applied index is %d, want %d (%v)", got, applied, err)
	}
	s.invalidateAll() // every key may have changed
	return nil
}
