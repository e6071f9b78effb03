package acl

import (
	"slices"
	"strings"

	"basalt/internal/command"
	"basalt/internal/glob"
)

// Key permissions of a key pattern: %R~ reads, %W~ writes, ~ both.
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

type keyPattern struct {
	pattern string
	perm    int
}

func (p keyPattern) String() string {
	switch p.perm {
	case permRead:
		return "%R~" + p.pattern
	case permWrite:
		return "%W~" + p.pattern
	}
	return "~" + p.pattern
}

// Selector is one set of permissions: a user has a root selector and any
// number of "(...)" selectors; a command may run if one selector allows it.
type Selector struct {
	allKeys, allChannels bool
	// allCommands skips the command bits: set by +@all, cleared by any
	// command taken away.
	allCommands bool
	allowed     []uint64         // bit per command id (table), and the future bit
	firstArgs   map[int][]string // +select|0: the first arguments allowed of a command not allowed
	keys        []keyPattern     // in the order given
	channels    []string         // in the order given
}

func newSelector(allChannels bool) *Selector {
	return &Selector{allowed: make([]uint64, table().words()), allChannels: allChannels}
}

func (s *Selector) clone() *Selector {
	c := *s
	c.allowed = slices.Clone(s.allowed)
	c.keys = slices.Clone(s.keys)
	c.channels = slices.Clone(s.channels)
	if s.firstArgs != nil {
		c.firstArgs = map[int][]string{}
		for id, args := range s.firstArgs {
			c.firstArgs[id] = slices.Clone(args)
		}
	}
	return &c
}

func (s *Selector) bit(id int) bool { return s.allowed[id/64]&(1<<(id%64)) != 0 }

func (s *Selector) setBit(id int, on bool) {
	if on {
		s.allowed[id/64] |= 1 << (id % 64)
	} else {
		s.allowed[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// change allows or denies a command and, for a container, its subcommands
// (Redis's ACLChangeSelectorPerm).
func (s *Selector) change(c *command.Command, on bool) {
	t := table()
	id := t.ids[c]
	s.setBit(id, on)
	delete(s.firstArgs, id)
	for _, sub := range c.Subcommands {
		s.setBit(t.ids[sub], on)
	}
}

func (s *Selector) setCategory(cat string, on bool) {
	for _, c := range table().cmds {
		if inCategory(c, cat) {
			s.change(c, on)
		}
	}
}

func (s *Selector) setAll(on bool) {
	var v uint64
	if on {
		v = ^uint64(0)
	}
	for i := range s.allowed {
		s.allowed[i] = v
	}
	s.allCommands = on
	s.firstArgs = nil
}

// apply applies one selector rule (Redis's ACLSetSelector).
func (s *Selector) apply(op string) error {
	if op == "" { // only inside "(...)": a user rule "" changes nothing
		return errSyntax
	}
	switch lower := strings.ToLower(op); {
	case lower == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lower == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lower == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case lower == "resetchannels":
		s.allChannels, s.channels = false, nil
	case lower == "allcommands" || lower == "+@all":
		s.setAll(true)
	case lower == "nocommands" || lower == "-@all":
		s.setAll(false)
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return errChannelsAfterAll
		}
		if hasSpaces(op[1:]) {
			return errSyntax
		}
		if !slices.Contains(s.channels, op[1:]) {
			s.channels = append(s.channels, op[1:])
		}
	case op[0] == '+' && !strings.HasPrefix(op, "+@"):
		return s.allowCommand(op[1:])
	case op[0] == '-' && !strings.HasPrefix(op, "-@"):
		c := lookup(op[1:])
		if c == nil {
			return errUnknownCommand
		}
		s.change(c, false)
	case op[0] == '+' || op[0] == '-':
		cat, ok := IsCategory(op[2:])
		if !ok {
			return errUnknownCommand
		}
		s.setCategory(cat, op[0] == '+')
	default:
		return errSyntax
	}
	return nil
}

func (s *Selector) addKeyPattern(op string) error {
	if s.allKeys {
		return errKeysAfterAll
	}
	perm, rest := permAll, op[1:]
	if op[0] == '%' {
		perm = 0
		i := 1
		for ; i < len(op); i++ {
			switch ch := op[i] | 0x20; {
			case ch == 'r' && perm&permRead == 0:
				perm |= permRead
			case ch == 'w' && perm&permWrite == 0:
				perm |= permWrite
			case op[i] == '~':
				i++
				goto done
			default:
				return errSyntax
			}
		}
	done:
		rest = op[i:]
		if perm == 0 { // "%" alone: Redis 7.0 would store a pattern it cannot print
			return errSyntax
		}
	}
	if hasSpaces(rest) {
		return errSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == rest {
			s.keys[i].perm |= perm
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{rest, perm})
	return nil
}

// allowCommand applies "+cmd", "+cmd|sub" or "+cmd|firstarg".
func (s *Selector) allowCommand(name string) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		c := lookup(name)
		if c == nil {
			return errUnknownCommand
		}
		s.change(c, true)
		return nil
	}
	c := lookup(name[:i])
	switch {
	case c == nil:
		return errUnknownCommand
	case strings.Contains(c.Name, "|"):
		return errFirstArgOfSub
	case i == len(name)-1:
		return errSyntax
	case len(c.Subcommands) > 0:
		sub := lookup(name)
		if sub == nil {
			return errUnknownCommand
		}
		s.change(sub, true)
	default:
		id, arg := table().ids[c], name[i+1:]
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		if !slices.ContainsFunc(s.firstArgs[id], func(a string) bool { return strings.EqualFold(a, arg) }) {
			s.firstArgs[id] = append(s.firstArgs[id], arg)
		}
	}
	return nil
}

func hasSpaces(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0
	})
}

// Denial says why a command was refused: the command itself, one of its
// keys or one of its channels; Arg is the argument (index in argv) of a
// key or channel.
type Denial struct {
	Reason Reason
	Arg    int
}

// Reason is a kind of denial, ordered as Redis ranks them.
type Reason int

const (
	Allowed Reason = iota
	DeniedCommand
	DeniedKey
	DeniedChannel
	DeniedAuth
)

// String is the reason as ACL LOG shows it.
func (r Reason) String() string {
	return [...]string{"", "command", "key", "channel", "auth"}[r]
}

// check decides whether this selector lets cmd (a subcommand if argv has
// one) run with argv (Redis's ACLSelectorCheckCmd).
func (s *Selector) check(cmd *command.Command, argv [][]byte, keys func() []command.FoundKey) Denial {
	if !s.allCommands && cmd.Flags&command.NoAuth == 0 && !s.bit(table().ids[cmd]) {
		idx := 1
		if strings.Contains(cmd.Name, "|") {
			idx = 2
		}
		args := s.firstArgs[table().ids[cmd]]
		if len(argv) <= idx || !slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, string(argv[idx])) }) {
			return Denial{Reason: DeniedCommand}
		}
	}
	if !s.allKeys {
		for _, k := range keys() {
			if !s.keyAllowed(k) {
				return Denial{DeniedKey, keyArg(argv, k.Key)}
			}
		}
	}
	if ch, ok := channelArgs[cmd.Name]; ok && !s.allChannels {
		last := len(argv) - 1
		if !ch.all {
			last = min(1, last)
		}
		for i := 1; i <= last; i++ {
			if !s.channelAllowed(string(argv[i]), ch.pattern) {
				return Denial{DeniedChannel, i}
			}
		}
	}
	return Denial{}
}

// keyArg finds which argument a key is (the keys found alias argv).
func keyArg(argv [][]byte, key []byte) int {
	for i, a := range argv {
		if len(a) > 0 && len(key) > 0 && &a[0] == &key[0] {
			return i
		}
	}
	for i, a := range argv[1:] {
		if string(a) == string(key) {
			return i + 1
		}
	}
	return 0
}

// keyAllowed matches a key against the patterns that grant what its key
// spec needs: access needs read, insert/delete/update need write.
func (s *Selector) keyAllowed(k command.FoundKey) bool {
	if s.allKeys {
		return true
	}
	need := 0
	for _, f := range k.Flags {
		switch f {
		case "access":
			need |= permRead
		case "insert", "delete", "update":
			need |= permWrite
		}
	}
	for _, p := range s.keys {
		if p.perm&need == need && glob.MatchString(p.pattern, string(k.Key), false) {
			return true
		}
	}
	return false
}

// channelAllowed matches a channel against the channel patterns; a
// PSUBSCRIBE pattern must equal one of them.
func (s *Selector) channelAllowed(channel string, isPattern bool) bool {
	if s.allChannels {
		return true
	}
	for _, p := range s.channels {
		if isPattern && p == channel || !isPattern && glob.MatchString(p, channel, false) {
			return true
		}
	}
	return false
}

// unrestricted reports whether the selector allows everything, so checks
// can be skipped.
func (s *Selector) unrestricted() bool { return s.allCommands && s.allKeys && s.allChannels }
