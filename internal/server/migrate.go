package server

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/rdb"
	"basalt/internal/shard"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key...], as Redis 7.0's
// migrateCommand (cluster.c) behaves. It talks to the target over the
// network, so it runs on the connection (on the leader: a follower
// forwards it), never in the apply loop:
//
//   - each key is watched (as WATCH does), then its DUMP payload and
//     remaining TTL are read from applied state;
//   - the target gets AUTH/AUTH2, SELECT and the RESTOREs in one write, and
//     its replies are read with the timeout;
//   - without COPY, the keys the target accepted are deleted by one record
//     that applies like an EXEC guarded by those watches: if any of them
//     changed since it was read, nothing is deleted and MIGRATE says so
//     (Redis, single-threaded, cannot meet this case).
//
// Redis keeps the connection to a target for 10 s; basalt dials each time.

// errMigrateChanged answers a MIGRATE whose keys reached the target but
// changed here meanwhile, so that deleting them would lose the change.
const errMigrateChanged = "ERR Target instance accepted the keys but they were not deleted here: a key changed during MIGRATE"

type migrateArgs struct {
	host, port string
	db         int64
	timeout    time.Duration
	copy       bool
	replace    bool
	user, pass []byte // AUTH2 user pass, or AUTH pass (user nil)
	auth       bool
	keys       [][]byte
	dial       func(addr string, timeout time.Duration) (net.Conn, error) // over TLS as nodes talk (dialNode)
}

// migrateItem is a key found, ready to send.
type migrateItem struct {
	key     []byte
	ttl     int64 // ms left, 0: no expiry
	payload []byte
}

// parseMigrate checks the arguments in Redis's order: the options first,
// then timeout, then the database.
func parseMigrate(argv [][]byte) (a migrateArgs, errReply string) {
	a.host, a.port = string(argv[1]), string(argv[2])
	a.keys = argv[3:4]
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch strings.ToLower(string(argv[j])) {
		case "copy":
			a.copy = true
		case "replace":
			a.replace = true
		case "auth":
			if more < 1 {
				return a, command.ErrSyntax
			}
			a.auth, a.user, a.pass = true, nil, argv[j+1]
			j++
		case "auth2":
			if more < 2 {
				return a, command.ErrSyntax
			}
			a.auth, a.user, a.pass = true, argv[j+1], argv[j+2]
			j += 2
		case "keys":
			if len(argv[3]) != 0 {
				return a, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
			}
			a.keys = argv[j+1:]
			j = len(argv)
		default:
			return a, command.ErrSyntax
		}
	}
	timeout, ok := num.ParseInt(argv[5])
	if !ok {
		return a, command.ErrNotInt
	}
	if a.db, ok = num.ParseInt(argv[4]); !ok {
		return a, command.ErrNotInt
	}
	if timeout <= 0 {
		timeout = 1000 // Redis's default
	}
	a.timeout = time.Duration(min(timeout, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
	return a, ""
}

func cmdMigrate(c *Client, argv [][]byte) {
	w := c.reply()
	a, errReply := parseMigrate(argv)
	if errReply != "" {
		w.Error(errReply)
		return
	}
	a.dial = c.srv.dialNode
	if !c.confirmLocal(w) { // the keys as every write so far left them
		return
	}
	items, watches := c.readForMigrate(a.keys)
	defer func() {
		for _, k := range watches {
			c.sh.Watches.Unwatch(k.DB, k.Key)
		}
	}()
	if len(items) == 0 {
		w.Simple("NOKEY")
		return
	}
	accepted, errReply := a.transfer(items)
	if !a.copy && len(accepted) > 0 {
		if e := c.deleteMigrated(accepted, watches); e != "" {
			errReply = e
		}
	}
	if errReply != "" {
		w.Error(errReply)
		return
	}
	w.OK()
}

// readForMigrate watches each key, then reads the live ones' payloads and
// TTLs on one snapshot of applied state. It returns the watches of every
// key (to unregister) in the order of the items, after them those of the
// missing keys.
func (c *Client) readForMigrate(keys [][]byte) ([]migrateItem, []shard.WatchKey) {
	watches := make([]shard.WatchKey, 0, len(keys))
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		watches = append(watches, shard.WatchKey{DB: c.db, Key: key, Index: c.sh.Watch(c.db, key)})
	}
	now := nowMs()
	tx := c.sh.Store().ReadTx(c.db, now, true)
	defer tx.Close()
	var items []migrateItem
	var found, missing []shard.WatchKey
	for _, wk := range watches {
		wk.Live, wk.Expired = tx.Alive(c.db, wk.Key), tx.ExpiredIn(c.db, wk.Key)
		m, ok := tx.Lookup(wk.Key)
		if !ok {
			missing = append(missing, wk)
			continue
		}
		ttl := int64(0)
		if m.ExpireAt != 0 {
			ttl = max(m.ExpireAt-now, 1)
		}
		items = append(items, migrateItem{key: wk.Key, ttl: ttl, payload: rdb.Encode(command.DumpValue(tx, wk.Key, m))})
		found = append(found, wk)
	}
	return items, append(found, missing...)
}

// deleteMigrated deletes keys (sent and accepted) in one record guarded by
// their watches, and returns an error reply if it could not.
func (c *Client) deleteMigrated(keys [][]byte, watches []shard.WatchKey) string {
	del := append([][]byte{[]byte("del")}, keys...)
	guard := make([]shard.WatchKey, 0, len(keys))
	for _, wk := range watches {
		for _, k := range keys {
			if string(k) == string(wk.Key) {
				guard = append(guard, wk)
				break
			}
		}
	}
	p := getProposal(c)
	p.Rec = shard.Record{Kind: shard.KindExec, DB: c.db, Cmds: [][][]byte{del}, Watch: guard}
	err := c.proposeHere(p)
	if err == nil && !c.await(p) {
		return command.ErrBusy // withdrawn behind a script past its time limit
	}
	defer putProposal(p)
	switch {
	case err != nil:
		return proposeError(err)
	case p.Rec.Kind == shard.KindAborted:
		return errMigrateChanged
	}
	return ""
}

// transfer sends the items to the target and returns the keys it accepted
// and the error reply, if any. Like Redis it tries a second time, on a new
// connection, after a socket error (not a timeout) before the target
// answered any RESTORE.
func (a *migrateArgs) transfer(items []migrateItem) (accepted [][]byte, errReply string) {
	cmds := a.commands(items)
	for attempt := 0; ; attempt++ {
		retry := attempt == 0
		accepted, errReply, again := a.attempt(cmds, items, retry)
		if !again {
			return accepted, errReply
		}
	}
}

const (
	errMigrateConnect = "IOERR error or timeout connecting to the client"
	errMigrateWrite   = "IOERR error or timeout writing to target instance"
	errMigrateRead    = "IOERR error or timeout reading to target instance"
)

// attempt is one connection's try; again asks for another (only if
// mayRetry).
func (a *migrateArgs) attempt(cmds []byte, items []migrateItem, mayRetry bool) (accepted [][]byte, errReply string, again bool) {
	nc, err := a.dial(net.JoinHostPort(a.host, strconv.Itoa(atoi(a.port))), a.timeout)
	if err != nil {
		// Redis connects without blocking and waits until the socket is
		// writable: a refusal shows up as the write failing, and only a
		// timeout or an address that does not resolve fails the connect.
		if refused(err) {
			return nil, errMigrateWrite, mayRetry
		}
		return nil, errMigrateConnect, false
	}
	defer nc.Close()
	// Written in 64 KB chunks, each within the timeout, as Redis does.
	for pos := 0; pos < len(cmds); {
		end := min(pos+64<<10, len(cmds))
		nc.SetWriteDeadline(time.Now().Add(a.timeout))
		n, err := nc.Write(cmds[pos:end])
		if err != nil {
			return nil, errMigrateWrite, mayRetry && !isTimeout(err)
		}
		pos += n
	}
	r := bufio.NewReader(nc)
	readLine := func() (string, error) {
		nc.SetReadDeadline(time.Now().Add(a.timeout))
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return "", errors.New("empty line") // Redis's syncReadLine fails on it too
		}
		return line, nil
	}
	var authReply, selectReply string
	if a.auth {
		if authReply, err = readLine(); err != nil {
			return nil, errMigrateRead, mayRetry && !isTimeout(err)
		}
	}
	if selectReply, err = readLine(); err != nil {
		return nil, errMigrateRead, mayRetry && !isTimeout(err)
	}
	// The first error the target gave, the AUTH's or SELECT's first: each
	// RESTORE reply read counts against it as in Redis.
	targetErr := ""
	for _, l := range []string{authReply, selectReply} {
		if targetErr == "" && strings.HasPrefix(l, "-") {
			targetErr = l
		}
	}
	errReply = ""
	j := 0
	for ; j < len(items); j++ {
		line, err := readLine()
		if err != nil {
			if errReply == "" && j == 0 && mayRetry && !isTimeout(err) {
				return nil, errMigrateRead, true
			}
			if errReply == "" {
				errReply = errMigrateRead
			}
			break
		}
		if targetErr != "" || line[0] == '-' {
			if errReply == "" {
				e := targetErr
				if e == "" {
					e = line
				}
				errReply = "ERR Target instance replied with error: " + e[1:]
			}
			continue
		}
		accepted = append(accepted, items[j].key)
	}
	return accepted, errReply, false
}

// commands is what MIGRATE sends: AUTH, SELECT and a RESTORE per item.
func (a *migrateArgs) commands(items []migrateItem) []byte {
	var b []byte
	if a.auth {
		if a.user != nil {
			b = appendCommand(b, []byte("AUTH"), a.user, a.pass)
		} else {
			b = appendCommand(b, []byte("AUTH"), a.pass)
		}
	}
	b = appendCommand(b, []byte("SELECT"), strconv.AppendInt(nil, a.db, 10))
	for _, it := range items {
		args := [][]byte{[]byte("RESTORE"), it.key, strconv.AppendInt(nil, it.ttl, 10), it.payload}
		if a.replace {
			args = append(args, []byte("REPLACE"))
		}
		b = appendCommand(b, args...)
	}
	return b
}

func appendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// atoi is C's atoi, which Redis reads the port with: leading digits, 0 if
// none.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
