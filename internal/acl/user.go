package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
)

// The errors of a rule, with Redis's texts (ACLSetUserStringError).
var (
	errUnknownCommand   = errors.New("Unknown command or category name in ACL")
	errSyntax           = errors.New("Syntax error")
	errKeysAfterAll     = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChannelsAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoSuchPassword   = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash          = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errFirstArgOfSub    = errors.New("Allowing first-arg of a subcommand is not supported")
)

// User is a set of credentials and selectors. A User is not changed once
// published in Users: SETUSER builds a new one.
type User struct {
	Name    string
	enabled bool // on; a new user is off
	noPass  bool
	// sanitize is "" (never said), "sanitize-payload" or
	// "skip-sanitize-payload": kept and printed only.
	sanitize  string
	passwords []string    // SHA-256 hex, in the order added
	selectors []*Selector // the root selector first
	open      bool        // the root selector allows everything (a fast path)
	desc      string      // what Describe answers
}

// newUser is a user as Redis creates one: off, no password, no permission.
func newUser(name string, allChannels bool) *User {
	return &User{Name: name, selectors: []*Selector{newSelector(allChannels)}}
}

func (u *User) clone() *User {
	c := *u
	c.passwords = slices.Clone(u.passwords)
	c.selectors = make([]*Selector, len(u.selectors))
	for i, s := range u.selectors {
		c.selectors[i] = s.clone()
	}
	return &c
}

// Enabled reports whether the user may authenticate (on).
func (u *User) Enabled() bool { return u.enabled }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.noPass }

// HasPassword reports whether the user needs a password it has (protected
// mode counts such users).
func (u *User) HasPassword() bool { return len(u.passwords) > 0 }

// Passwords are the SHA-256 hashes of the user's passwords.
func (u *User) Passwords() []string { return u.passwords }

// Root is the root selector; Selectors are the others.
func (u *User) Root() *Selector        { return u.selectors[0] }
func (u *User) Selectors() []*Selector { return u.selectors[1:] }

// Flags are the user flags in Redis's order (ACL GETUSER "flags").
func (u *User) Flags() []string {
	var out []string
	if u.enabled {
		out = append(out, "on")
	} else {
		out = append(out, "off")
	}
	if u.noPass {
		out = append(out, "nopass")
	}
	if u.sanitize != "" {
		out = append(out, u.sanitize)
	}
	return out
}

// HashPassword is the SHA-256 hex digest Redis stores for a password.
func HashPassword(pass []byte) string {
	sum := sha256.Sum256(pass)
	return hex.EncodeToString(sum[:])
}

// CheckPassword reports whether pass authenticates the user.
func (u *User) CheckPassword(pass []byte) bool {
	if !u.enabled {
		return false
	}
	if u.noPass {
		return true
	}
	h := HashPassword(pass)
	ok := false
	for _, p := range u.passwords {
		ok = subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 || ok
	}
	return ok
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// apply applies one rule to the user (Redis's ACLSetUser).
func (u *User) apply(op string, allChannels bool) error {
	if op == "" {
		return nil
	}
	switch lower := strings.ToLower(op); {
	case lower == "on":
		u.enabled = true
	case lower == "off":
		u.enabled = false
	case lower == "skip-sanitize-payload" || lower == "sanitize-payload":
		u.sanitize = lower
	case lower == "nopass":
		u.noPass, u.passwords = true, nil
	case lower == "resetpass":
		u.noPass, u.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword([]byte(h))
		} else if !validHash(h) {
			return errBadHash
		}
		if !slices.Contains(u.passwords, h) {
			u.passwords = append(u.passwords, h)
		}
		u.noPass = false
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword([]byte(h))
		} else if !validHash(h) {
			return errBadHash
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return errNoSuchPassword
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(allChannels)
		for _, inner := range splitArgs(op[1 : len(op)-1]) {
			if err := s.apply(inner); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case lower == "clearselectors":
		u.selectors = u.selectors[:1]
	case lower == "reset":
		u.noPass, u.passwords = false, nil
		u.enabled, u.sanitize = false, "sanitize-payload"
		root := newSelector(allChannels)
		u.selectors = []*Selector{root}
	default:
		return u.selectors[0].apply(op)
	}
	return nil
}

// splitArgs splits a selector's inside on white space; quotes group, as
// in Redis's sdssplitargs (enough for rules, which have no spaces).
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '"' || ch == '\'':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// mergeSelectors joins the arguments of "(" ... ")" selectors split by
// the client into one rule (Redis's ACLMergeSelectorArguments).
func mergeSelectors(ops []string) ([]string, error) {
	var out []string
	open := -1
	for i, op := range ops {
		switch {
		case open >= 0:
			out[len(out)-1] += " " + op
			if strings.HasSuffix(op, ")") {
				open = -1
			}
		case strings.HasPrefix(op, "(") && !strings.HasSuffix(op, ")"):
			out = append(out, op)
			open = i
		default:
			out = append(out, op)
		}
	}
	if open >= 0 {
		return nil, errors.New("Unmatched parenthesis in acl selector starting at '" + ops[open] + "'.")
	}
	return out, nil
}

// RuleError is a rule that failed, and why.
type RuleError struct {
	Rule string
	Err  error
}

// Error is ACL SETUSER's text.
func (e *RuleError) Error() string {
	return "Error in ACL SETUSER modifier '" + e.Rule + "': " + e.Err.Error()
}

// Edit returns a copy of u (a new user named name if u is nil) with the
// rules applied; an error names the rule that failed, as ACL SETUSER says
// it, and nothing is applied.
func Edit(u *User, name string, rules []string, allChannels bool) (*User, error) {
	ops, err := mergeSelectors(rules)
	if err != nil {
		return nil, err
	}
	if u == nil {
		u = newUser(name, allChannels)
	} else {
		u = u.clone()
	}
	for _, op := range ops {
		if err := u.apply(op, allChannels); err != nil {
			return nil, &RuleError{op, err}
		}
	}
	u.open = u.selectors[0].unrestricted()
	u.desc = u.describe()
	return u, nil
}
