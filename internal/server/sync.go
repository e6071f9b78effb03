package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/resp"
)

// REPLCONF, SYNC and PSYNC: the replication handshake of a Redis master,
// for snapshots. `redis-cli --rdb file` (and --functions-rdb) sends
// REPLCONF capa eof, REPLCONF rdb-only 1 (and rdb-filter-only functions),
// then SYNC, and saves the RDB file that comes back. basalt sends the file
// of one instant of this node's applied state, as SAVE writes it, then
// closes the connection, as Redis does for an rdb-only client. basalt's
// replication is Raft, not a stream of commands: a client that did not ask
// for the RDB only (a Redis replica, REPLICAOF basalt) is refused rather
// than given a snapshot that would never be kept up to date.
// These are the node's own: never records, never forwarded (localCommands).

// replConf is what a client told with REPLCONF.
type replConf struct {
	rdbOnly bool             // rdb-only 1: the snapshot, not a replication stream
	skip    command.RDBParts // rdb-filter-only: the parts it did not include
}

// errNoStream answers SYNC and PSYNC from a client that did not send
// REPLCONF rdb-only 1.
const errNoStream = "ERR basalt does not stream replication (its nodes replicate through Raft): send REPLCONF rdb-only 1 first for a snapshot, as redis-cli --rdb does"

// replTimeout is Redis's default repl-timeout: a client that takes none
// of its snapshot for that long is dropped, with the file it holds.
const replTimeout = 60 * time.Second

// sendChunk is how much of the file goes out per write deadline.
const sendChunk = 1 << 20

// maxReplicaAddr is Redis's NET_HOST_STR_LEN: REPLCONF ip-address must be
// shorter.
const maxReplicaAddr = 256

// cmdReplconf takes the options of Redis 7.0's REPLCONF in pairs and
// answers +OK once all are valid. listening-port, ip-address and capa
// only describe a replica, which basalt never keeps: they are checked and
// dropped. ACK and GETACK answer nothing, as in Redis for a client that is
// not a replica (and a master that has none).
func cmdReplconf(c *Client, argv [][]byte) {
	w := c.reply()
	if len(argv)%2 == 0 { // every option has its value
		w.Error(command.ErrSyntax)
		return
	}
	for i := 1; i < len(argv); i += 2 {
		opt, val := strings.ToLower(string(argv[i])), argv[i+1]
		switch opt {
		case "listening-port":
			if _, ok := num.ParseInt(val); !ok {
				w.Error(command.ErrNotInt)
				return
			}
		case "ip-address":
			if len(val) >= maxReplicaAddr {
				w.Error(fmt.Sprintf("ERR REPLCONF ip-address provided by replica instance is too long: %d bytes", len(val)))
				return
			}
		case "capa": // eof, psync2: basalt sends files with their length, which every replica reads
		case "ack", "getack":
			return
		case "rdb-only":
			n, ok := num.ParseInt(val)
			if !ok {
				w.Error(command.ErrNotInt)
				return
			}
			if n < 0 || n > 1 {
				w.Error("ERR value is out of range, value must between 0 and 1")
				return
			}
			c.repl.rdbOnly = n == 1
		case "rdb-filter-only":
			filters, ok := resp.SplitArgs(val)
			if !ok {
				w.Error("ERR Missing rdb-filter-only values")
				return
			}
			skip := command.RDBParts{NoKeys: true, NoFunctions: true} // "" asks for an empty file
			for _, f := range filters {
				if !strings.EqualFold(string(f), "functions") {
					w.Error("ERR Unsupported rdb-filter-only option: " + string(f))
					return
				}
				skip.NoFunctions = false
			}
			c.repl.skip = skip
		default:
			w.Error("ERR Unrecognized REPLCONF option: " + string(argv[i]))
			return
		}
	}
	w.OK()
}

// cmdSync is SYNC and PSYNC replid offset. A PSYNC never continues (basalt
// keeps no replication backlog): it is a full resynchronization, announced
// by +FULLRESYNC with the node's replication id (master_replid) and offset
// 0. The snapshot follows as a bulk of its length, without the CRLF, and
// the connection closes.
func cmdSync(c *Client, argv [][]byte) {
	psync := strings.EqualFold(string(argv[0]), "psync")
	if psync && len(argv) > 3 && strings.EqualFold(string(argv[3]), "failover") {
		c.reply().Error("ERR PSYNC FAILOVER can't be sent to a master.")
		return
	}
	w := c.reply()
	if c.replyMark > 0 {
		// Replies of earlier commands wait in the buffer (a pipeline):
		// the file must not follow them.
		w.Error("ERR SYNC and PSYNC are invalid with pending output")
		return
	}
	if psync {
		if _, ok := num.ParseInt(argv[2]); !ok {
			w.Error(command.ErrNotInt)
			return
		}
	}
	if !c.repl.rdbOnly {
		w.Error(errNoStream)
		return
	}
	s := c.srv
	if psync && string(argv[1]) != "?" {
		s.Stats.SyncPartialErr.Add(1) // asked to continue, which never happens
	}
	s.Stats.SyncFull.Add(1)
	if psync {
		w.Raw([]byte("+FULLRESYNC " + s.runID + " 0\r\n"))
	}
	c.closing = true // whatever happens next, as Redis drops an rdb-only client after its file
	if !c.flush() {
		return
	}
	if c.sub != nil {
		// Messages for the client wait until the file is sent (and are
		// dropped with the connection).
		c.sub.wmu.Lock()
		defer c.sub.wmu.Unlock()
	}
	if err := s.sendSnapshot(c.nc, c.repl.skip); err != nil {
		slog.Warn("SYNC: the snapshot was not sent", "client", c.nc.RemoteAddr().String(), "err", err)
	}
}

// sendSnapshot writes the snapshot into a temporary file, with a newline
// to nc every second meanwhile (Redis's keepalive while it saves, which
// replicas and redis-cli skip), then sends it as a bulk of its length.
// The store's view is closed before the first byte of the file is sent:
// a slow reader holds nothing but its own file, which is already unlinked,
// and only as long as it keeps reading.
func (s *Server) sendSnapshot(nc net.Conn, skip command.RDBParts) error {
	tmp, err := os.CreateTemp(s.config().Dir, "temp-sync-*.rdb")
	if err != nil {
		return err
	}
	defer tmp.Close()
	os.Remove(tmp.Name()) // the open file stays: nothing is left behind, whatever happens

	var keepErr error // the keepalive's, read once it stopped
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_, keepErr = nc.Write([]byte("\n"))
				if keepErr != nil {
					return
				}
			}
		}
	}()
	_, err = s.writeSnapshot(tmp, skip)
	close(done)
	wg.Wait()
	if err != nil {
		return err
	}
	if keepErr != nil {
		return keepErr
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	defer nc.SetWriteDeadline(time.Time{})
	nc.SetWriteDeadline(time.Now().Add(replTimeout))
	if _, err := fmt.Fprintf(nc, "$%d\r\n", size); err != nil {
		return err
	}
	for sent := int64(0); sent < size; {
		nc.SetWriteDeadline(time.Now().Add(replTimeout))
		n, err := io.CopyN(nc, tmp, min(sendChunk, size-sent)) // sendfile, chunk by chunk
		sent += n
		s.Stats.NetReplOutput.Add(n)
		if err != nil {
			return fmt.Errorf("after %d bytes of %d: %w", sent, size, err)
		}
	}
	return nil
}
