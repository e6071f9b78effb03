package acl

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"basalt/internal/command"
)

// Users is the set of users of a node. Connections hold a *Handle, which
// follows its user's changes: SETUSER publishes a new *User in it.
type Users struct {
	mu      sync.Mutex
	handles map[string]*Handle
	// allChannels is acl-pubsub-default: new selectors start with
	// allchannels (true) or resetchannels.
	allChannels atomic.Bool
}

// Handle is a user as connections see it: the current rules, or nil once
// the user is deleted.
type Handle struct {
	name string
	user atomic.Pointer[User]
}

// Name is the user's name.
func (h *Handle) Name() string { return h.name }

// User is the user's current rules; nil once deleted.
func (h *Handle) User() *User { return h.user.Load() }

// DefaultName is the user every connection starts as.
const DefaultName = "default"

// NewUsers returns the users of a fresh node: only "default", on, with no
// password and every permission.
func NewUsers() *Users {
	us := &Users{handles: map[string]*Handle{}}
	us.Reset(nil)
	return us
}

func defaultUser() *User {
	u, _ := Edit(nil, DefaultName, []string{"+@all", "~*", "&*", "on", "nopass"}, false)
	return u
}

// SetAllChannelsDefault sets acl-pubsub-default (true: allchannels).
func (us *Users) SetAllChannelsDefault(all bool) { us.allChannels.Store(all) }

// Get returns the handle of a user, nil if there is none.
func (us *Users) Get(name string) *Handle {
	us.mu.Lock()
	defer us.mu.Unlock()
	return us.handles[name]
}

// Default returns the default user's handle.
func (us *Users) Default() *Handle { return us.Get(DefaultName) }

// Names lists the users in name order (ACL USERS).
func (us *Users) Names() []string {
	us.mu.Lock()
	defer us.mu.Unlock()
	names := make([]string, 0, len(us.handles))
	for n := range us.handles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetUser applies rules to a user, creating it if needed (ACL SETUSER).
// It returns the user before and after (before is nil for a new user).
func (us *Users) SetUser(name string, rules []string) (before, after *User, err error) {
	if hasSpaces(name) {
		return nil, nil, errors.New("Usernames can't contain spaces or null characters")
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	h := us.handles[name]
	if h != nil {
		before = h.User()
	}
	after, err = Edit(before, name, rules, us.allChannels.Load())
	if err != nil {
		return nil, nil, err
	}
	if h == nil {
		h = &Handle{name: name}
		us.handles[name] = h
	}
	h.user.Store(after)
	return before, after, nil
}

// Delete removes users (ACL DELUSER) and returns the handles removed:
// their connections must be closed.
func (us *Users) Delete(names []string) ([]*Handle, error) {
	if slices.Contains(names, DefaultName) {
		return nil, errors.New("The 'default' user cannot be removed")
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	var gone []*Handle
	for _, n := range names {
		if h := us.handles[n]; h != nil {
			delete(us.handles, n)
			h.user.Store(nil)
			gone = append(gone, h)
		}
	}
	return gone, nil
}

// List is ACL LIST: each user as a "user" line of an ACL file.
func (us *Users) List() []string {
	var out []string
	for _, n := range us.Names() {
		if u := us.Get(n).User(); u != nil {
			out = append(out, "user "+n+" "+u.Describe())
		}
	}
	return out
}

// Authenticate returns the handle of name if pass authenticates it.
func (us *Users) Authenticate(name string, pass []byte) *Handle {
	h := us.Get(name)
	if h == nil {
		// Hash anyway: an unknown user takes as long as a wrong password.
		HashPassword(pass)
		return nil
	}
	if u := h.User(); u == nil || !u.CheckPassword(pass) {
		return nil
	}
	return h
}

// Definition is one user of an ACL file or of "user" directives: a name
// and its rules.
type Definition struct {
	Name  string
	Rules []string
}

// Build checks definitions and makes the users they describe, as ACL LOAD
// does: the default user is reset first if the definitions name it, and
// kept as it is if not. Nothing changes on error.
func (us *Users) build(defs []Definition) (map[string]*User, error) {
	users := map[string]*User{}
	for _, d := range defs {
		if _, dup := users[d.Name]; dup {
			return nil, errors.New("'" + d.Name + "': " + errDuplicateUser.Error())
		}
		if hasSpaces(d.Name) {
			return nil, errors.New("Usernames can't contain spaces or null characters")
		}
		u, err := Edit(nil, d.Name, d.Rules, us.allChannels.Load())
		if err != nil {
			return nil, err
		}
		users[d.Name] = u
	}
	return users, nil
}

// Reset replaces every user by the definitions (ACL LOAD, the "user"
// directives at startup): users not defined are deleted, and the default
// user, when not defined, is kept as it is (or created, the first time).
// It returns the handles deleted or changed, whose connections must be
// checked.
func (us *Users) Reset(defs []Definition) (changed []*Handle, err error) {
	users, err := us.build(defs)
	if err != nil {
		return nil, err
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	if users[DefaultName] == nil {
		if h := us.handles[DefaultName]; h != nil {
			users[DefaultName] = h.User()
		} else {
			users[DefaultName] = defaultUser()
		}
	}
	for name, h := range us.handles {
		if users[name] == nil {
			delete(us.handles, name)
			h.user.Store(nil)
			changed = append(changed, h)
		}
	}
	for name, u := range users {
		h := us.handles[name]
		if h == nil {
			h = &Handle{name: name}
			us.handles[name] = h
		} else if h.User() != u {
			changed = append(changed, h)
		}
		h.user.Store(u)
	}
	return changed, nil
}

// ParseFile parses an ACL file: one "user <name> <rules...>" a line,
// blank lines and # comments skipped. Errors name the line as Redis does.
func ParseFile(text string) ([]Definition, error) {
	var defs []Definition
	var errs []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		f := splitArgs(line)
		if len(f) < 2 || f[0] != "user" {
			errs = append(errs, "/"+itoa(i+1)+": line should start with user keyword")
			continue
		}
		defs = append(defs, Definition{f[1], f[2:]})
	}
	if errs != nil {
		return nil, errors.New(strings.Join(errs, " "))
	}
	return defs, nil
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// File is the users as ACL SAVE writes them: ACL LIST's lines.
func (us *Users) File() string {
	return strings.Join(us.List(), "\n") + "\n"
}

// AnyPassword reports whether some enabled user needs a password (Redis's
// protected mode is off then).
func (us *Users) AnyPassword() bool {
	us.mu.Lock()
	defer us.mu.Unlock()
	for _, h := range us.handles {
		if u := h.User(); u != nil && !u.noPass && len(u.passwords) > 0 {
			return true
		}
	}
	return false
}

// Check decides whether u may run cmd (the subcommand, when argv names
// one) with argv: allowed if one selector allows it; otherwise the most
// relevant denial, as Redis picks it (ACLCheckAllUserCommandPerm).
func (u *User) Check(cmd *command.Command, argv [][]byte) Denial {
	if u.open {
		return Denial{}
	}
	var keys []command.FoundKey
	found := false
	getKeys := func() []command.FoundKey {
		if !found {
			keys, found = cmd.FoundKeys(argv), true
		}
		return keys
	}
	worst := Denial{Reason: DeniedCommand}
	for _, s := range u.selectors {
		d := s.check(cmd, argv, getKeys)
		if d.Reason == Allowed {
			return d
		}
		if d.Reason > worst.Reason || d.Reason == worst.Reason && d.Arg > worst.Arg {
			worst = d
		}
	}
	return worst
}

// CheckChannel reports whether u may use a channel (or, isPattern, a
// PSUBSCRIBE pattern).
func (u *User) CheckChannel(channel string, isPattern bool) bool {
	for _, s := range u.selectors {
		if s.channelAllowed(channel, isPattern) {
			return true
		}
	}
	return false
}

// Open reports whether the user may run anything with any key and
// channel (the default user of a node without ACL rules).
func (u *User) Open() bool { return u.open }
