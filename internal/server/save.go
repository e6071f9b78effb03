package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"basalt/internal/command"
	"basalt/internal/rdb"
	"basalt/internal/store"
)

// SAVE, BGSAVE, LASTSAVE and BGREWRITEAOF. basalt needs no RDB file to be
// durable (every write is in the Raft log and Pebble before its reply);
// SAVE writes one as a backup: a point-in-time dump.rdb of this node's
// applied state that redis-server loads. These commands are the node's
// own: never records, never forwarded (localCommands).

// errSaveInProgress is Redis's reply to a save while a BGSAVE runs.
const errSaveInProgress = "ERR Background save already in progress"

// saveState is what INFO persistence and LASTSAVE tell about saves.
type saveState struct {
	mu         sync.Mutex
	running    bool      // a SAVE or BGSAVE is writing
	background bool      // and it is a BGSAVE
	started    time.Time // when the running one started
	lastSave   time.Time // end of the last successful save (server start before any)
	bgOK       bool      // the last BGSAVE succeeded (or a SAVE since)
	bgSeconds  int64     // how long the last BGSAVE took, -1 before any
	saves      int64     // saves started
	// changesAt is the count of records applied when the view of the last
	// successful save was taken: rdb_changes_since_last_save counts from it.
	changesAt int64
}

// begin claims the saver for a save; false if one runs already.
func (s *saveState) begin(background bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return false
	}
	s.running, s.background, s.started = true, background, time.Now()
	s.saves++
	return true
}

// end records a save's outcome. changesAt is the applied record count of
// the view it wrote.
func (s *saveState) end(err error, changesAt int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.background {
		s.bgSeconds = int64(now.Sub(s.started).Seconds())
	}
	if s.background || err == nil { // a failed SAVE leaves it, as in Redis's rdbSave
		s.bgOK = err == nil
	}
	if err == nil {
		s.lastSave, s.changesAt = now, changesAt
	}
	s.running, s.background = false, false
}

func cmdSave(c *Client, argv [][]byte) {
	s := c.srv
	if !s.saving.begin(false) {
		c.reply().Error(errSaveInProgress)
		return
	}
	changes, err := s.saveRDB()
	s.saving.end(err, changes)
	if err != nil {
		slog.Error("SAVE failed", "err", err)
		c.reply().Error("ERR")
		return
	}
	c.reply().OK()
}

// cmdBgsave is BGSAVE [SCHEDULE]. basalt never rewrites an AOF, so
// SCHEDULE (which waits for one) starts the save at once; inside EXEC,
// as in Redis, the save is "scheduled": it starts right after.
func cmdBgsave(c *Client, argv [][]byte) {
	if len(argv) > 2 || len(argv) == 2 && !strings.EqualFold(string(argv[1]), "schedule") {
		c.reply().Error(command.ErrSyntax)
		return
	}
	s := c.srv
	if !s.saving.begin(true) {
		c.reply().Error(errSaveInProgress)
		return
	}
	s.wg.Add(1) // Close waits for it (and makes it stop early)
	go func() {
		defer s.wg.Done()
		changes, err := s.saveRDB()
		s.saving.end(err, changes)
		if err != nil {
			slog.Error("BGSAVE failed", "err", err)
		}
	}()
	if c.inExec {
		c.reply().Simple("Background saving scheduled")
		return
	}
	c.reply().Simple("Background saving started")
}

func cmdLastsave(c *Client, argv [][]byte) {
	s := &c.srv.saving
	s.mu.Lock()
	at := s.lastSave
	s.mu.Unlock()
	c.reply().Int(at.Unix())
}

// saveBeforeShutdown is SHUTDOWN SAVE's save: it waits for a save in
// progress to end (Redis kills a BGSAVE's child instead), then saves the
// state as it is now, and reports whether the file was written.
func (s *Server) saveBeforeShutdown() bool {
	for !s.saving.begin(false) {
		time.Sleep(10 * time.Millisecond) // a save always ends
	}
	changes, err := s.saveRDB()
	s.saving.end(err, changes)
	if err != nil {
		slog.Error("Error trying to save the DB, can't exit", "err", err)
		return false
	}
	return true
}

// cmdBgrewriteaof answers as Redis does and does nothing: basalt's
// append-only log is the Raft log, which is truncated as its entries are
// applied and synced, and Pebble compacts the data continuously, so there
// is nothing to rewrite. Redis schedules the rewrite while a BGSAVE runs
// or inside EXEC, and says so.
func cmdBgrewriteaof(c *Client, argv [][]byte) {
	s := &c.srv.saving
	s.mu.Lock()
	running := s.running && s.background
	s.mu.Unlock()
	if running || c.inExec {
		c.reply().Simple("Background append only file rewriting scheduled")
		return
	}
	c.reply().Simple("Background append only file rewriting started")
}

// saveRDB writes the RDB file of one instant of the applied state to
// dir/dbfilename: to a temporary file in dir, synced, renamed over the
// old file, and the directory synced, so that the file is either the old
// one or the whole new one. It returns the applied record count at the
// instant saved.
func (s *Server) saveRDB() (changesAt int64, err error) {
	cfg := s.config()
	if cfg.DBFilename == "" {
		return 0, errors.New("dbfilename is empty")
	}
	dir := cfg.Dir
	tmp, err := os.CreateTemp(dir, "temp-*.rdb")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600; Redis 0666 less the umask
		return 0, err
	}
	if changesAt, err = s.writeSnapshot(tmp, command.RDBParts{}); err != nil {
		return 0, err
	}
	if err = tmp.Sync(); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, cfg.DBFilename)); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	return changesAt, d.Sync()
}

// removeSaveLeftovers deletes the temporary files of saves a crash (or
// SIGKILL) cut short: they are never renamed into place, and nothing else
// would remove them. It runs before the server serves, so no save of its
// own is under way.
func removeSaveLeftovers(dir string) {
	leftovers, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb"))
	for _, f := range leftovers {
		if err := os.Remove(f); err != nil {
			slog.Warn("removing an unfinished save's file", "file", f, "err", err)
		}
	}
}

// writeSnapshot writes the RDB file of one instant of the applied state
// (one store.View, closed before it returns) to w, less what skip leaves
// out. It returns the applied record count at that instant. The server's
// shutdown stops it.
func (s *Server) writeSnapshot(w io.Writer, skip command.RDBParts) (changesAt int64, err error) {
	changesAt = s.recordsApplied()
	var views []*store.View
	defer func() {
		for _, v := range views {
			v.Tx.Close()
		}
	}()
	for _, sh := range s.shards {
		view, err := sh.Store().View(time.Now().UnixMilli())
		if err != nil {
			return 0, err
		}
		views = append(views, view)
	}
	defer func() {
		if r := recover(); r != nil { // a store failure panics in reads
			err = fmt.Errorf("reading the store: %v", r)
		}
	}()
	return changesAt, command.WriteRDB(stopWriter{w, s.closed}, views, s.rdbAux(), skip)
}

// errSaveStopped ends a save the server's shutdown interrupts.
var errSaveStopped = errors.New("the server is shutting down")

// stopWriter fails every write once stop is closed, so that a save in
// progress stops reading the store when the server closes (as Redis
// kills its saving child at shutdown) and leaves no file behind.
type stopWriter struct {
	w    io.Writer
	stop chan struct{}
}

func (w stopWriter) Write(p []byte) (int, error) {
	select {
	case <-w.stop:
		return 0, errSaveStopped
	default:
		return w.w.Write(p)
	}
}

// rdbAux is the header Redis 7.0 writes (rdbSaveInfoAuxFields) when no
// replica ever connected: no replication fields.
func (s *Server) rdbAux() []rdb.AuxField {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	aux := func(k, v string) rdb.AuxField { return rdb.AuxField{Key: k, Value: v} }
	return []rdb.AuxField{
		aux("redis-ver", RedisVersion),
		aux("redis-bits", strconv.Itoa(strconv.IntSize)),
		aux("ctime", strconv.FormatInt(time.Now().Unix(), 10)),
		aux("used-mem", strconv.FormatUint(m.HeapAlloc, 10)),
		aux("aof-base", "0"),
	}
}
