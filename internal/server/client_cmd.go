package server

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
)

// CLIENT: listing, naming and killing connections.

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}

func cmdClient(c *Client, argv [][]byte) {
	switch strings.ToLower(string(argv[1])) {
	case "id":
		c.reply().Int(c.id)
	case "setname":
		if err := validClientName(argv[2]); err != "" {
			c.reply().Error(err)
			return
		}
		name := string(argv[2])
		c.name.Store(&name)
		c.reply().OK()
	case "getname":
		if name := *c.name.Load(); name != "" {
			c.reply().BulkString(name)
		} else {
			c.reply().Null()
		}
	case "info":
		c.publishState() // this command's own state
		c.reply().Verbatim("txt", c.infoLine()+"\n")
	case "list":
		clientList(c, argv[2:])
	case "kill":
		clientKill(c, argv[2:])
	case "proxy": // basalt's: see proxyTo
		switch strings.ToLower(string(argv[2])) {
		case "on":
			c.proxy = true
			c.reply().OK()
		case "off":
			c.proxy = false
			c.reply().OK()
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "no-evict":
		switch strings.ToLower(string(argv[2])) {
		case "on", "off":
			c.mem.noEvict.Store(strings.EqualFold(string(argv[2]), "on"))
			c.reply().OK()
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "reply":
		switch strings.ToLower(string(argv[2])) {
		case "on":
			c.replyOff, c.skipNext, c.skipping = false, false, false
			c.reply().OK()
		case "off":
			c.replyOff = true
		case "skip":
			if !c.replyOff {
				c.skipNext = true
			}
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "unblock":
		clientUnblock(c, argv)
	case "pause":
		clientPause(c, argv)
	case "unpause":
		clientUnpause(c)
	case "tracking":
		clientTracking(c, argv)
	case "caching":
		clientCaching(c, argv)
	case "getredir":
		clientGetRedir(c)
	case "trackinginfo":
		clientTrackingInfo(c)
	case "help":
		command.HelpReply(c.reply(), clientHelp)
	}
}

// clients returns the connected clients in id order, as Redis lists them.
func (s *Server) clientsByID() []*Client {
	s.mu.Lock()
	out := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *Client) int { return int(a.id - b.id) })
	return out
}

func validClientType(t string) bool {
	switch strings.ToLower(t) {
	case "normal", "master", "replica", "slave", "pubsub":
		return true
	}
	return false
}

func clientList(c *Client, args [][]byte) {
	var ids []int64
	typ := ""
	switch {
	case len(args) == 0:
	case len(args) == 2 && strings.EqualFold(string(args[0]), "type"):
		typ = strings.ToLower(string(args[1]))
		if !validClientType(typ) {
			c.reply().Error("ERR Unknown client type '" + string(args[1]) + "'")
			return
		}
	case len(args) >= 2 && strings.EqualFold(string(args[0]), "id"):
		for _, a := range args[1:] {
			id, ok := num.ParseInt(a)
			if !ok {
				c.reply().Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	default:
		c.reply().Error(command.ErrSyntax)
		return
	}
	c.publishState()
	var b strings.Builder
	for _, o := range c.srv.clientsByID() {
		if typ != "" && typ != o.clientType() {
			continue
		}
		if ids != nil && !slices.Contains(ids, o.id) {
			continue
		}
		b.WriteString(o.infoLine())
		b.WriteByte('\n')
	}
	c.reply().Verbatim("txt", b.String())
}

// infoLine is the client's CLIENT LIST line. It runs on other clients'
// goroutines, so it reads only what they publish atomically.
func (c *Client) infoLine() string {
	db, proto, multi, queued := c.loadState()
	now := time.Now()
	subs := c.srv.subCounts(c)
	flags, multiN := "", -1
	if subs[kindChannel]+subs[kindPattern]+subs[kindShard] > 0 {
		flags = "P"
	}
	if multi {
		flags, multiN = flags+"x", queued
	}
	if c.blocked.Load() { // a blocking call, WAIT or WAITAOF
		flags += "b"
	}
	redir := int64(-1)
	c.srv.tracker.mu.Lock()
	if tr := c.track; tr != nil {
		flags, redir = flags+"t", tr.redirect
		if tr.broken {
			flags += "R"
		}
		if tr.bcast {
			flags += "B"
		}
	}
	c.srv.tracker.mu.Unlock()
	if c.mem.noEvict.Load() {
		flags += "e"
	}
	if flags == "" {
		flags = "N"
	}
	idle := int64(0)
	if at := c.lastAt.Load(); at > 0 {
		idle = (now.UnixMilli() - at) / 1000
	} else {
		idle = int64(now.Sub(c.created).Seconds())
	}
	cmd := *c.lastCmd.Load()
	if cmd == "" {
		cmd = "NULL"
	}
	qbuf, qbufFree := c.qb.figures(nanotime())
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%d tot-mem=%d events=r cmd=%s user=%s redir=%d resp=%d",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), connFD(c), *c.name.Load(), int64(now.Sub(c.created).Seconds()), idle, flags, db,
		subs[kindChannel], subs[kindPattern], subs[kindShard], multiN, qbuf, qbufFree, c.argvMem.Load(), c.mem.reply.Load()+c.mem.queue.Load(), c.mem.total(), cmd, c.userName(), redir, proto)
}

// clientType is the client's class for CLIENT LIST/KILL TYPE: "pubsub"
// while it has subscriptions, else "normal" (basalt has no replica clients).
func (c *Client) clientType() string {
	if n := c.srv.subCounts(c); n[kindChannel]+n[kindPattern]+n[kindShard] > 0 {
		return "pubsub"
	}
	return "normal"
}

// connFD returns the socket's file descriptor without duplicating it.
func connFD(c *Client) int {
	rc := rawConn(c.nc)
	if rc == nil {
		return -1
	}
	fd := -1
	_ = rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// rawConn returns the socket under nc (a TLS client's too), or nil.
func rawConn(nc net.Conn) syscall.RawConn {
	if tc, ok := nc.(tlsConn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// clientKill handles CLIENT KILL addr (replies OK or an error) and CLIENT
// KILL <filter> <value>... (replies with the number killed).
func clientKill(c *Client, args [][]byte) {
	if len(args) == 1 {
		addr := string(args[0])
		for _, o := range c.srv.clientsByID() {
			if o.nc.RemoteAddr().String() == addr {
				c.reply().OK()
				c.kill(o)
				return
			}
		}
		c.reply().Error("ERR No such client")
		return
	}
	if len(args)%2 != 0 {
		c.reply().Error(command.ErrSyntax)
		return
	}
	var (
		id          int64
		addr, laddr string
		user, typ   string
		skipMe      = true
	)
	for i := 0; i < len(args); i += 2 {
		v := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := num.ParseInt(args[i+1])
			if !ok || n <= 0 {
				c.reply().Error("ERR client-id should be greater than 0")
				return
			}
			id = n
		case "addr":
			addr = v
		case "laddr":
			laddr = v
		case "user":
			if c.srv.users.Get(v) == nil {
				c.reply().Error("ERR No such user '" + v + "'")
				return
			}
			user = v
		case "type":
			if !validClientType(v) {
				c.reply().Error("ERR Unknown client type '" + v + "'")
				return
			}
			typ = strings.ToLower(v)
		case "skipme":
			switch strings.ToLower(v) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.reply().Error(command.ErrSyntax)
				return
			}
		default:
			c.reply().Error(command.ErrSyntax)
			return
		}
	}
	var victims []*Client
	for _, o := range c.srv.clientsByID() {
		switch {
		case id != 0 && o.id != id,
			addr != "" && o.nc.RemoteAddr().String() != addr,
			laddr != "" && o.nc.LocalAddr().String() != laddr,
			typ != "" && typ != o.clientType(),
			user != "" && o.userName() != user,
			skipMe && o == c:
			continue
		}
		victims = append(victims, o)
	}
	c.reply().Int(int64(len(victims)))
	for _, o := range victims {
		c.kill(o)
	}
}

// kill closes another client's connection (its goroutine sees the read
// fail and cleans up), or this one's after its reply is written.
func (c *Client) kill(o *Client) {
	if o == c {
		c.closing = true
		return
	}
	o.killed.Store(true)
	o.nc.Close()
}
