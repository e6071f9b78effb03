package server

import (
	"basalt/internal/shard"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"basalt/internal/acl"
	"basalt/internal/command"
	"basalt/internal/num"
)

// The NOPERM replies of a command refused by the ACL (Redis's
// processCommand), by reason.
var nopermReplies = map[acl.Reason]string{
	acl.DeniedKey:     "NOPERM this user has no permissions to access one of the keys used as arguments",
	acl.DeniedChannel: "NOPERM this user has no permissions to access one of the channels used as arguments",
}

// user is the ACL user of the connection: its current rules, nil when the
// user was deleted (the connection is being closed).
func (c *Client) aclUser() *acl.User {
	if h := c.user.Load(); h != nil {
		return h.User()
	}
	return nil
}

func (c *Client) userName() string {
	if h := c.user.Load(); h != nil {
		return h.Name()
	}
	return acl.DefaultName
}

// aclRefuses is the ACL gate: it answers NOPERM, and logs the denial,
// when the connection's user may not run kind with argv.
func (c *Client) aclRefuses(kind *command.Command, argv [][]byte) bool {
	c.srv.syncUsers()
	if kind.Name == "raft" && len(argv) == 5 && strings.EqualFold(string(argv[1]), "publish") {
		// A follower's PUBLISH, sent as its client's user: checked as one.
		kind, argv = command.Lookup([]byte("publish")), [][]byte{[]byte("publish"), argv[3], argv[4]}
	}
	u := c.aclUser()
	if u == nil {
		return c.refuse(kind, "NOPERM this user has no permissions to run the '"+kind.Name+"' command")
	}
	if u.Open() {
		return false
	}
	d := u.Check(kind, argv)
	if d.Reason == acl.Allowed {
		return false
	}
	ctx := acl.TopLevel
	if c.multi {
		ctx = acl.Multi
	}
	c.logDenial(d, ctx, kind, argv)
	msg, ok := nopermReplies[d.Reason]
	if !ok {
		msg = "NOPERM this user has no permissions to run the '" + kind.Name + "' command"
	}
	return c.refuse(kind, msg)
}

// logDenial adds a denial to the ACL LOG.
func (c *Client) logDenial(d acl.Denial, ctx acl.Context, kind *command.Command, argv [][]byte) {
	c.srv.logDenial(d, ctx, kind, argv, c.userName(), c.infoLine())
}

// logDenial adds a denial to the ACL LOG: its object is the command, or
// the key or channel refused.
func (s *Server) logDenial(d acl.Denial, ctx acl.Context, kind *command.Command, argv [][]byte, user, clientInfo string) {
	object := kind.Name
	if d.Reason == acl.DeniedKey || d.Reason == acl.DeniedChannel {
		object = string(argv[d.Arg])
	}
	s.aclLog.Add(acl.Entry{Reason: d.Reason, Context: ctx, Object: object, Username: user,
		Created: time.Now(), ClientInfo: clientInfo}, s.config().ACLLogMaxLen)
}

// execDenial is the reply EXEC gives in place of a queued command the
// user may no longer run (Redis's execCommand), or "".
func (c *Client) execDenial(argv [][]byte) string {
	u := c.aclUser()
	cmd := command.Lookup(argv[0])
	if u == nil || u.Open() || cmd == nil {
		return ""
	}
	kind, errReply := checkArgs(cmd, argv)
	if errReply != "" {
		return ""
	}
	d := u.Check(kind, argv)
	var reason string
	switch d.Reason {
	case acl.Allowed:
		return ""
	case acl.DeniedCommand:
		reason = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		reason = "no permission to touch the specified keys"
	default:
		reason = "no permission to access one of the channels used as arguments"
	}
	c.logDenial(d, acl.Multi, kind, argv)
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// strerror is an error as C's strerror words it ("No such file or directory").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		return strings.ToUpper(msg[:1]) + msg[1:]
	}
	return err.Error()
}

// deniedPlaceholder stands in an EXEC's record for a queued command the
// ACL refuses at EXEC: a connection command, so the record applies
// nothing for it and the connection writes its NOPERM in its place.
var deniedPlaceholder = [][]byte{[]byte("acl"), []byte("whoami")}

// execDenials checks the queued commands again at EXEC, as Redis does,
// replaces the refused ones by deniedPlaceholder and returns their
// replies by position.
func (c *Client) execDenials(queued [][][]byte) map[int]string {
	var denied map[int]string
	for i, q := range queued {
		if msg := c.execDenial(q); msg != "" {
			if denied == nil {
				denied = map[int]string{}
			}
			denied[i] = msg
			queued[i] = deniedPlaceholder
		}
	}
	return denied
}

// scriptACL is the rules a client's script runs with (shard.Record.ACL):
// "" when its user may run anything.
func (c *Client) scriptACL() string {
	u := c.aclUser()
	if u == nil || u.Open() {
		return ""
	}
	return "user " + u.Name + " " + u.Describe()
}

// scriptACLFor is scriptACL for a transaction: only one with a script
// needs the rules.
func (c *Client) scriptACLFor(queued [][][]byte) string {
	for _, q := range queued {
		if cmd := command.Lookup(q[0]); cmd != nil && cmd.Flags&command.Script != 0 {
			return c.scriptACL()
		}
	}
	return ""
}

// scriptUsers caches the users parsed from records' rules: a script's
// calls each check theirs.
var scriptUsers sync.Map // rules → *acl.User

const scriptUsersMax = 1024

// ScriptACL is command.Host's: it checks a script's redis.call, with
// Redis's error texts; live denials go to the ACL LOG.
func (s *Server) ScriptACL(rules string, cmd *command.Command, argv [][]byte, live bool) string {
	v, ok := scriptUsers.Load(rules)
	if !ok {
		var u *acl.User
		f := strings.Fields(rules) // "user <name> <rules...>"
		var err error
		if len(f) >= 2 {
			u, err = acl.Edit(nil, f[1], f[2:], false)
		}
		if err != nil || u == nil {
			return "The user executing the script can't run this command or subcommand"
		}
		if n := scriptUsersLen.Add(1); n > scriptUsersMax { // users come and go: start again
			scriptUsers.Clear()
			scriptUsersLen.Store(1)
		}
		v, _ = scriptUsers.LoadOrStore(rules, u)
	}
	u := v.(*acl.User)
	d := u.Check(cmd, argv)
	if d.Reason == acl.Allowed {
		return ""
	}
	if live {
		s.logDenial(d, acl.Lua, cmd, argv, u.Name, "")
	}
	return "The user executing the script " + scriptDenials[d.Reason]
}

var scriptUsersLen atomic.Int64

// scriptDenials are Redis's getAclErrorMessage texts.
var scriptDenials = map[acl.Reason]string{
	acl.DeniedCommand: "can't run this command or subcommand",
	acl.DeniedKey:     "can't access at least one of the keys mentioned in the command arguments",
	acl.DeniedChannel: "can't publish to the channel mentioned in the command",
}

// defaultNeedsAuth reports whether a new connection must AUTH: the
// default user has passwords or is off (Redis's authRequired).
func (s *Server) defaultNeedsAuth() bool {
	u := s.users.Default().User()
	return !u.Enabled() || !u.NoPass()
}

// authenticate makes the connection the user if pass is right, and logs
// a failure (reason auth) as Redis does.
func (c *Client) authenticate(user, pass []byte) bool {
	c.srv.syncUsers()
	h := c.srv.users.Authenticate(string(user), pass)
	if h == nil && c.srv.freshUsers() {
		h = c.srv.users.Authenticate(string(user), pass) // created on the leader a moment ago
	}
	if h == nil {
		ctx := acl.TopLevel
		if c.multi {
			ctx = acl.Multi
		}
		c.srv.aclLog.Add(acl.Entry{Reason: acl.DeniedAuth, Context: ctx, Object: "AUTH", Username: string(user),
			Created: time.Now(), ClientInfo: c.infoLine()}, c.srv.config().ACLLogMaxLen)
		return false
	}
	if h.Name() != c.userName() || c.up != nil && h.Name() != acl.DefaultName {
		c.closeUpstream() // the leader's side of the client authenticates again
	}
	c.user.Store(h)
	c.authPass = append([]byte(nil), pass...)
	c.setAuthed(true)
	return true
}

// newUsers makes the users at startup: requirepass sets the default
// user's password, then the "user" directives or the ACL file apply.
func newUsers(cfg Config) (*acl.Users, error) {
	users := acl.NewUsers()
	users.SetAllChannelsDefault(cfg.ACLPubsubDefault == "allchannels")
	setDefaultPassword(users, cfg.RequirePass)
	if cfg.ACLFile != "" && len(cfg.Users) > 0 {
		return nil, errUsersAndFile
	}
	if cfg.ACLFile == "" {
		return users, users.Reset(cfg.Users)
	}
	text, err := os.ReadFile(cfg.ACLFile)
	if err == nil {
		_, _, err = users.LoadFile(cfg.ACLFile, string(text))
	}
	if err != nil {
		return nil, fmt.Errorf("Aborting Redis startup because of ACL errors: %v", err)
	}
	return users, nil
}

type configError string

func (e configError) Error() string { return string(e) }

const errUsersAndFile = configError("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")

// setDefaultPassword is requirepass: the default user's only password, or
// nopass when empty.
func setDefaultPassword(users *acl.Users, pass string) {
	rules := []string{"resetpass", "nopass"}
	if pass != "" {
		rules = []string{"resetpass", ">" + pass}
	}
	if _, _, err := users.SetUser(acl.DefaultName, rules); err != nil {
		slog.Error("requirepass", "err", err)
	}
}

// dropUserClients closes the connections of users deleted or changed by
// ACL DELUSER or LOAD, as Redis 7.0 does (except the one running the
// command, which is closed after its reply).
func (c *Client) dropUserClients(handles []*acl.Handle) {
	for _, o := range c.srv.clientsByID() {
		for _, h := range handles {
			if o.user.Load() == h {
				c.kill(o)
			}
		}
	}
}

// dropRevokedSubscribers closes the connections of a user whose channel
// permissions no longer cover their subscriptions (Redis's
// ACLKillPubsubClientsIfNeeded).
func (c *Client) dropRevokedSubscribers(h *acl.Handle, u *acl.User) {
	for _, o := range c.srv.clientsByID() {
		if o.user.Load() != h || o.sub == nil {
			continue
		}
		if !c.srv.subscriptionsAllowed(o, u) {
			c.kill(o)
		}
	}
}

// subscriptionsAllowed reports whether u may keep every subscription of o.
func (s *Server) subscriptionsAllowed(o *Client, u *acl.User) bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	for k, names := range o.sub.names {
		for name := range names {
			if !u.CheckChannel(name, k == kindPattern) {
				return false
			}
		}
	}
	return true
}

var aclHelp = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}

// aclSubcommands run ACL's subcommands; the table checked their arity.
var aclSubcommands = map[string]func(c *Client, argv [][]byte){
	"setuser": aclSetUser,
	"getuser": aclGetUser,
	"deluser": aclDelUser,
	"list":    func(c *Client, _ [][]byte) { c.reply().BulkStrings(c.srv.users.List()) },
	"users":   func(c *Client, _ [][]byte) { c.reply().BulkStrings(c.srv.users.Names()) },
	"whoami":  func(c *Client, _ [][]byte) { c.reply().BulkString(c.userName()) },
	"cat":     aclCat,
	"genpass": aclGenPass,
	"log":     aclLog,
	"load":    aclLoad,
	"save":    aclSave,
	"dryrun":  aclDryRun,
	"help": func(c *Client, _ [][]byte) {
		command.HelpReply(c.reply(), append([]string{"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"}, aclHelp...))
	},
}

func cmdACL(c *Client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	if sub != "log" && sub != "whoami" && sub != "help" {
		c.srv.freshUsers() // show what the leader committed
	}
	aclSubcommands[sub](c, argv)
}

func aclSetUser(c *Client, argv [][]byte) {
	rules := make([]string, len(argv)-3)
	for i, a := range argv[3:] {
		rules[i] = string(a)
	}
	name := string(argv[2])
	c.srv.aclMu.Lock()
	defer c.srv.aclMu.Unlock()
	before, after, err := c.srv.users.SetUser(name, rules)
	if err != nil {
		c.reply().Error("ERR " + err.Error())
		return
	}
	if before != nil {
		c.dropRevokedSubscribers(c.srv.users.Get(name), after)
	}
	c.replyUsers(func() { c.reply().OK() })
}

// usersGroup is the Raft group whose log and store hold the ACL users:
// the node's one group, or in cluster mode the metadata group, which
// every node holds.
func (s *Server) usersGroup() *shard.Shard {
	if s.meta != nil {
		return s.meta
	}
	return s.group()
}

// replyUsers writes the users through the log, so that every node has
// them and a restart finds them, then answers with ok. The change is in
// force here already; the caller holds aclMu, so the records follow the
// changes in order. If the log refuses it (this node does not lead),
// the users go back to the log's and the client gets the error.
func (c *Client) replyUsers(ok func()) {
	p := getProposal(c)
	defer putProposal(p)
	p.Rec = shard.Record{Kind: shard.KindACL, Cmds: [][][]byte{{[]byte(c.srv.users.File())}}}
	errReply := ""
	if err := c.srv.usersGroup().Propose(p); err != nil {
		errReply = proposeError(err)
	} else if !c.await(p) {
		errReply = command.ErrBusy
	} else if b := p.W.Bytes(); len(b) > 0 && b[0] == '-' {
		errReply = strings.TrimSuffix(string(b[1:]), "\r\n")
	}
	if errReply != "" {
		c.srv.aclGen.Store(0) // load the log's users again
		c.reply().Error(errReply)
		return
	}
	ok()
}

// freshUsers brings a follower's users up to what the leader had
// committed when it was called, and reports whether it waited: a user
// just created elsewhere can authenticate here at once.
func (s *Server) freshUsers() bool {
	sh := s.usersGroup()
	if sh.Lone() || sh.ReadIndex(5*time.Second) != nil {
		return false
	}
	s.syncUsers()
	return true
}

// syncUsers reloads the users from the log's copy when a commit or a
// snapshot changed it: another node's ACL SETUSER, DELUSER or LOAD. The
// users deleted lose their connections, and those whose channels were
// revoked their subscribers.
func (s *Server) syncUsers() {
	st := s.usersGroup().Store()
	if st.ACLGen()+1 == s.aclGen.Load() {
		return
	}
	s.aclMu.Lock()
	defer s.aclMu.Unlock()
	gen := st.ACLGen()
	if gen+1 == s.aclGen.Load() {
		return
	}
	s.aclGen.Store(gen + 1)
	tx := st.ReadTx(0, nowMs(), false)
	text, ok := tx.ACL()
	text = append([]byte(nil), text...)
	tx.Close()
	if !ok {
		return // never changed: the configuration's users
	}
	gone, changed, err := s.users.LoadFile("log", string(text))
	if err != nil {
		slog.Error("ACL users in the log", "err", err)
		return
	}
	if pass := s.config().RequirePass; pass != "" {
		// requirepass is this node's setting: it keeps the default
		// user's password here, whatever the log says.
		setDefaultPassword(s.users, pass)
	}
	for _, o := range s.clientsByID() {
		h := o.user.Load()
		switch {
		case slices.Contains(gone, h):
			o.killed.Store(true)
			o.nc.Close()
		case slices.Contains(changed, h) && o.sub != nil && !s.subscriptionsAllowed(o, h.User()):
			o.killed.Store(true)
			o.nc.Close()
		}
	}
}

func aclGetUser(c *Client, argv [][]byte) {
	w := c.reply()
	h := c.srv.users.Get(string(argv[2]))
	if h == nil || h.User() == nil {
		w.Null()
		return
	}
	u := h.User()
	w.MapLen(6)
	w.BulkString("flags")
	w.SetLen(len(u.Flags()))
	for _, f := range u.Flags() {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.BulkStrings(u.Passwords())
	writeSelector(w, u.Root())
	w.BulkString("selectors")
	w.ArrayLen(len(u.Selectors()))
	for _, s := range u.Selectors() {
		w.MapLen(3)
		writeSelector(w, s)
	}
}

func writeSelector(w interface {
	BulkString(string)
}, s *acl.Selector) {
	w.BulkString("commands")
	w.BulkString(s.CommandsString())
	w.BulkString("keys")
	w.BulkString(s.KeysString())
	w.BulkString("channels")
	w.BulkString(s.ChannelsString())
}

func aclDelUser(c *Client, argv [][]byte) {
	names := make([]string, len(argv)-2)
	for i, a := range argv[2:] {
		names[i] = string(a)
	}
	c.srv.aclMu.Lock()
	defer c.srv.aclMu.Unlock()
	gone, err := c.srv.users.Delete(names)
	if err != nil {
		c.reply().Error("ERR " + err.Error())
		return
	}
	c.dropUserClients(gone)
	if len(gone) == 0 {
		c.reply().Int(0)
		return
	}
	c.replyUsers(func() { c.reply().Int(int64(len(gone))) })
}

func aclCat(c *Client, argv [][]byte) {
	if len(argv) == 2 {
		c.reply().BulkStrings(acl.Categories)
		return
	}
	if len(argv) > 3 {
		c.reply().Error(command.WrongArity("acl|cat"))
		return
	}
	cat, ok := acl.IsCategory(string(argv[2]))
	if !ok {
		c.reply().Error("ERR Unknown category '" + truncate(string(argv[2]), 128) + "'")
		return
	}
	c.reply().BulkStrings(acl.CommandsIn(cat))
}

const genpassMaxBits = 4096

func aclGenPass(c *Client, argv [][]byte) {
	bits := int64(256)
	if len(argv) > 3 {
		c.reply().Error(command.WrongArity("acl|genpass"))
		return
	}
	if len(argv) == 3 {
		n, ok := num.ParseInt(argv[2])
		if !ok {
			c.reply().Error(command.ErrNotInt)
			return
		}
		bits = n
	}
	if bits <= 0 || bits > genpassMaxBits {
		c.reply().Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to " + strconv.Itoa(genpassMaxBits))
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	c.reply().BulkString(hex.EncodeToString(buf)[:chars])
}

func aclLog(c *Client, argv [][]byte) {
	w := c.reply()
	count := int64(10)
	if len(argv) > 3 {
		w.Error(command.WrongArity("acl|log"))
		return
	}
	if len(argv) == 3 {
		if strings.EqualFold(string(argv[2]), "reset") {
			c.srv.aclLog.Reset()
			w.OK()
			return
		}
		n, ok := num.ParseInt(argv[2])
		if !ok {
			w.Error(command.ErrNotInt)
			return
		}
		count = max(n, 0)
	}
	now := time.Now()
	entries := c.srv.aclLog.Entries(int(min(count, 1<<20)))
	w.ArrayLen(len(entries))
	for _, e := range entries {
		w.MapLen(7)
		w.BulkString("count")
		w.Int(int64(e.Count))
		w.BulkString("reason")
		w.BulkString(e.Reason.String())
		w.BulkString("context")
		w.BulkString(string(e.Context))
		w.BulkString("object")
		w.BulkString(e.Object)
		w.BulkString("username")
		w.BulkString(e.Username)
		w.BulkString("age-seconds")
		w.Double(float64(now.Sub(e.Created).Milliseconds()) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.ClientInfo)
	}
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclLoad(c *Client, argv [][]byte) {
	file := c.srv.config().ACLFile
	if file == "" {
		c.reply().Error(errNoACLFile)
		return
	}
	text, err := os.ReadFile(file)
	if err != nil {
		c.reply().Error("ERR Error loading ACLs, opening file '" + file + "': " + strerror(err))
		return
	}
	c.srv.aclMu.Lock()
	defer c.srv.aclMu.Unlock()
	before := c.srv.users.Handles()
	if _, _, err := c.srv.users.LoadFile(file, string(text)); err != nil {
		c.reply().Error("ERR " + err.Error())
		return
	}
	// As Redis, every user's connections but the default user's close.
	before = slices.DeleteFunc(before, func(h *acl.Handle) bool { return h.Name() == acl.DefaultName })
	c.dropUserClients(before)
	c.replyUsers(func() { c.reply().OK() })
}

func aclSave(c *Client, argv [][]byte) {
	file := c.srv.config().ACLFile
	if file == "" {
		c.reply().Error(errNoACLFile)
		return
	}
	// Written beside the file and renamed over it: a crash leaves the
	// old file or the new one, as Redis does.
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp")
	err := os.WriteFile(tmp, []byte(c.srv.users.File()), 0o600)
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		slog.Error("ACL SAVE", "file", file, "err", err)
		c.reply().Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.reply().OK()
}

func aclDryRun(c *Client, argv [][]byte) {
	w := c.reply()
	h := c.srv.users.Get(string(argv[2]))
	if h == nil || h.User() == nil {
		w.Error("ERR User '" + string(argv[2]) + "' not found")
		return
	}
	args := argv[3:]
	cmd := command.Lookup(args[0])
	if cmd != nil && len(cmd.Subcommands) > 0 && len(args) > 1 {
		cmd = cmd.Subcommand(args[1])
	}
	if cmd == nil {
		w.Error("ERR Command '" + string(args[0]) + "' not found")
		return
	}
	if !cmd.ArityOK(len(args)) {
		w.Error("ERR wrong number of arguments for '" + cmd.Name + "' command")
		return
	}
	switch d := h.User().Check(cmd, args); d.Reason {
	case acl.Allowed:
		w.OK()
	case acl.DeniedCommand:
		w.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	case acl.DeniedKey:
		w.BulkString("This user has no permissions to access the '" + string(args[d.Arg]) + "' key")
	default:
		w.BulkString("This user has no permissions to access the '" + string(args[d.Arg]) + "' channel")
	}
}
