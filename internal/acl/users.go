package acl

import (
	"errors"
	"slices"
	"sort"
	"strconv"
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

// Reset replaces every user by the definitions ("user" directives at
// startup): users not defined are deleted, and the default user, when not
// defined, stays as it is.
func (us *Users) Reset(defs []Definition) error {
	users := map[string]*User{}
	for _, d := range defs {
		u, err := Edit(nil, d.Name, d.Rules, us.allChannels.Load())
		if err != nil {
			return err
		}
		users[d.Name] = u
	}
	us.replace(users, false)
	return nil
}

// replace installs users; the default user, when missing, is kept or
// (fresh) made anew. It returns the users deleted, and those whose rules
// changed.
func (us *Users) replace(users map[string]*User, fresh bool) (gone, changed []*Handle) {
	us.mu.Lock()
	defer us.mu.Unlock()
	if users[DefaultName] == nil {
		if h := us.handles[DefaultName]; h != nil && !fresh {
			users[DefaultName] = h.User()
		} else {
			users[DefaultName] = defaultUser()
		}
	}
	for name, h := range us.handles {
		if users[name] == nil {
			delete(us.handles, name)
			h.user.Store(nil)
			gone = append(gone, h)
		}
	}
	for name, u := range users {
		h := us.handles[name]
		if h == nil {
			h = &Handle{name: name}
			us.handles[name] = h
		} else if old := h.User(); old.Describe() != u.Describe() {
			changed = append(changed, h)
		}
		h.user.Store(u)
	}
	return gone, changed
}

// Handles returns every user's handle.
func (us *Users) Handles() []*Handle {
	us.mu.Lock()
	defer us.mu.Unlock()
	out := make([]*Handle, 0, len(us.handles))
	for _, h := range us.handles {
		out = append(out, h)
	}
	return out
}

// LoadFile replaces every user by those of an ACL file (ACL LOAD, aclfile
// at startup): "user <name> <rules...>" lines, blank lines skipped. The
// default user, when the file does not define it, is made anew, as Redis
// does. Errors name the file and line as Redis's do, and change nothing.
// It returns the users deleted and those whose rules changed.
func (us *Users) LoadFile(file, text string) (gone, changed []*Handle, err error) {
	users := map[string]*User{}
	seen := map[string]bool{} // a user whose rules fail is still defined
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		at := file + ":" + strconv.Itoa(i+1)
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] != "user" || len(f) < 2:
			errs.WriteString(at + " should start with user keyword followed by the username. ")
			continue
		case seen[f[1]]:
			errs.WriteString("WARNING: Duplicate user '" + f[1] + "' found on line " + strconv.Itoa(i+1) + ". ")
			continue
		}
		seen[f[1]] = true
		u, err := Edit(nil, f[1], f[2:], us.allChannels.Load())
		var re *RuleError
		switch {
		case errors.As(err, &re) && re.Err == errUnknownCommand:
			errs.WriteString(at + ": Error in applying operation '" + re.Rule + "': " + re.Err.Error() + ". ")
		case errors.As(err, &re):
			errs.WriteString(at + ": " + re.Err.Error() + ". ")
		case err != nil:
			errs.WriteString(at + ": Unmatched parenthesis in selector definition.")
		default:
			users[f[1]] = u
		}
	}
	if errs.Len() > 0 {
		return nil, nil, errors.New(errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
	}
	gone, changed = us.replace(users, true)
	return gone, changed, nil
}

// File is the users as ACL SAVE writes them: ACL LIST's lines.
func (us *Users) File() string {
	return strings.Join(us.List(), "\n") + "\n"
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
