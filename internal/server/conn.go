package server

import (
	"basalt/internal/acl"
	"strings"

	"basalt/internal/clock"
	"basalt/internal/command"
	"basalt/internal/num"
)

// connHandler runs a command flagged command.Conn: one that reads or
// changes the connection or the server rather than the key space.
type connHandler = func(c *Client, argv [][]byte)

// connCommands says which handler runs each Conn command. init puts each
// into its entry of the command table (command.Command.Conn), so dispatch
// finds it with the one lookup of the command.
var connCommands = map[string]connHandler{
	// connection and transactions (conn.go, txn.go)
	"select":   cmdSelect,
	"auth":     cmdAuth,
	"hello":    cmdHello,
	"quit":     cmdQuit,
	"reset":    cmdReset,
	"shutdown": cmdShutdown,
	"multi":    cmdMulti,
	"exec":     cmdExec,
	"discard":  cmdDiscard,
	"watch":    cmdWatch,
	"unwatch":  cmdUnwatch,

	// the server (admin.go, info.go, client_cmd.go, debug.go)
	"info":    cmdInfo,
	"config":  cmdConfig,
	"client":  cmdClient,
	"debug":   cmdDebug,
	"slowlog": cmdSlowlog,
	"latency": cmdLatency,
	"monitor": cmdMonitor,

	// replication and backups (raft.go, failover.go, save.go, sync.go, migrate.go)
	"raft":         cmdRaft,
	"readonly":     cmdReadonly,
	"readwrite":    cmdReadwrite,
	"wait":         cmdWait,
	"waitaof":      cmdWaitaof,
	"role":         cmdRole,
	"failover":     cmdFailover,
	"save":         cmdSave,
	"bgsave":       cmdBgsave,
	"lastsave":     cmdLastsave,
	"bgrewriteaof": cmdBgrewriteaof,
	"replconf":     cmdReplconf,
	"sync":         cmdSync,
	"psync":        cmdSync,
	"migrate":      cmdMigrate,

	// cluster mode (cluster.go)
	"cluster": cmdCluster,
	"asking":  cmdAsking,

	// pub/sub (pubsub.go)
	"subscribe":    cmdSubscribe,
	"psubscribe":   cmdPsubscribe,
	"ssubscribe":   cmdSsubscribe,
	"unsubscribe":  cmdUnsubscribe,
	"punsubscribe": cmdPunsubscribe,
	"sunsubscribe": cmdSunsubscribe,
	"publish":      cmdPublish,
	"spublish":     cmdSpublish,
	"pubsub":       cmdPubsub,

	// access control (acl_cmd.go)
	"acl": cmdACL,
}

func init() {
	for name, h := range connCommands {
		cmd := command.LookupFull(name)
		if cmd == nil || cmd.Flags&command.Conn == 0 {
			panic("server: " + name + " is not a Conn command of the command table")
		}
		cmd.Conn = h
	}
}

// connHandlerOf is the handler of a Conn command, nil if it has none.
func connHandlerOf(cmd *command.Command) connHandler {
	h, _ := cmd.Conn.(connHandler)
	return h
}

// RedisVersion is the Redis version whose behaviour basalt follows; clients
// read it from HELLO and INFO to decide which commands they may send.
const RedisVersion = "7.0.15"

func nowMs() int64 { return clock.UnixMilli() }

func (s *Server) config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (c *Client) parseDB(arg []byte) (int, bool) {
	n, ok := num.ParseInt(arg)
	if !ok || n < 0 || n >= int64(c.srv.databases()) {
		return 0, false
	}
	return int(n), true
}

func cmdSelect(c *Client, argv [][]byte) {
	db, msg := command.SelectDB(argv[1], c.srv.clustered(), c.srv.databases())
	if msg != "" {
		c.reply().Error(msg)
		return
	}
	c.db = db
	c.reply().OK()
}

func (c *Client) setAuthed(ok bool) {
	c.authed = ok
	c.rd.Authenticated = ok
}

// AUTH [user] password; without a user, the default user's password.
func cmdAuth(c *Client, argv [][]byte) {
	if len(argv) > 3 {
		c.reply().Error("ERR syntax error")
		return
	}
	user, pass := []byte(acl.DefaultName), argv[1]
	if len(argv) == 3 {
		user, pass = argv[1], argv[2]
	} else if u := c.srv.users.Default().User(); u.NoPass() {
		c.reply().Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !c.authenticate(user, pass) {
		c.reply().Error("WRONGPASS invalid username-password pair or user is disabled.")
		return
	}
	c.reply().OK()
}

func cmdHello(c *Client, argv [][]byte) {
	w := c.reply()
	proto := c.proto
	if len(argv) >= 2 {
		v, ok := num.ParseInt(argv[1])
		if !ok {
			w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			w.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
	}
	var name []byte
	setName := false
	for i := 2; i < len(argv); i++ {
		opt := strings.ToLower(string(argv[i]))
		switch {
		case opt == "auth" && i+2 < len(argv):
			if !c.authenticate(argv[i+1], argv[i+2]) {
				w.Error("WRONGPASS invalid username-password pair or user is disabled.")
				return
			}
			i += 2
		case opt == "setname" && i+1 < len(argv):
			name, setName = argv[i+1], true
			i++
		default:
			w.Error("ERR Syntax error in HELLO option '" + string(argv[i]) + "'")
			return
		}
	}
	if !c.authed {
		w.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		if err := validClientName(name); err != "" {
			w.Error(err)
			return
		}
		s := string(name)
		c.name.Store(&s)
	}
	c.proto = proto
	w.Proto = proto
	w.MapLen(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(RedisVersion)
	w.BulkString("proto")
	w.Int(int64(proto))
	w.BulkString("id")
	w.Int(c.id)
	w.BulkString("mode")
	w.BulkString(c.srv.mode())
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.ArrayLen(0)
}

// validClientName returns Redis's error for a name with spaces or
// non-printable characters, or "".
func validClientName(name []byte) string {
	for _, b := range name {
		if b < '!' || b > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	return ""
}

func cmdQuit(c *Client, argv [][]byte) {
	c.reply().OK()
	c.closing = true
}

func cmdReset(c *Client, argv [][]byte) {
	w := c.reply()
	c.endMulti()
	c.stopMonitoring()
	c.closeUpstream() // the leader's side of the client goes too
	c.readonly, c.upMulti, c.upQueued, c.upName, c.watchLost = false, false, 0, nil, false
	c.dropSubscriptions()
	c.srv.tracker.disable(c)
	c.db = 0
	c.proto = 2
	w.Proto = 2
	empty := ""
	c.name.Store(&empty)
	c.replyOff, c.skipNext = false, false
	c.user.Store(c.srv.users.Default())
	c.authPass = nil
	c.setAuthed(!c.srv.defaultNeedsAuth())
	w.Simple("RESET")
}

func cmdShutdown(c *Client, argv [][]byte) {
	nosave, save, force := false, false, false
	for _, a := range argv[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "force":
			force = true
		case "now":
		case "abort":
			c.reply().Error("ERR No shutdown in progress.")
			return
		default:
			c.reply().Error("ERR syntax error")
			return
		}
	}
	if !nosave && command.ScriptBusy() {
		// Only NOSAVE may stop a busy script, whatever it wrote (see Close).
		c.reply().Error(command.ErrBusy)
		return
	}
	c.waitPending()
	// SHUTDOWN SAVE writes the RDB file first, as Redis does (basalt has
	// no save points, so nothing else saves at shutdown); if it fails the
	// server stays up, unless FORCE.
	if save && !nosave && !c.srv.saveBeforeShutdown() && !force {
		c.reply().Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	c.srv.requestShutdown()
	c.closing = true
}
