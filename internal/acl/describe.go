package acl

import (
	"math"
	"strings"
)

// commandRules describes the selector's command bits as rules ACL SETUSER
// takes back, as Redis's ACLDescribeSelectorCommandRules does: +@all or
// -@all, then the categories that fit best, then single commands. The
// rules are replayed on a fake selector as they are chosen, so each step
// knows the bits still to fix.
func (s *Selector) commandRules() string {
	t := table()
	var rules []string
	fake := newSelector(false)
	additive := !s.bit(t.future)
	if additive {
		rules = append(rules, "-@all")
	} else {
		rules = append(rules, "+@all")
		fake.setAll(true)
	}
	temp := &Selector{allowed: append([]uint64(nil), s.allowed...)}
	applied := make([]bool, len(Categories))
	for {
		best := -1
		minDiff, maxSame := math.MaxInt, 0
		for j, cat := range Categories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(cat)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		cat := Categories[best]
		fake.setCategory(cat, additive)
		temp.setCategory(cat, !additive)
		if additive {
			rules = append(rules, "+@"+cat)
		} else {
			rules = append(rules, "-@"+cat)
		}
		applied[best] = true
	}
	for id, c := range t.cmds {
		user := s.bit(id)
		if user != fake.bit(id) {
			if user {
				rules = append(rules, "+"+c.Name)
			} else {
				rules = append(rules, "-"+c.Name)
			}
			fake.change(c, user)
		}
		if !user {
			for _, arg := range s.firstArgs[id] {
				rules = append(rules, "+"+c.Name+"|"+arg)
			}
		}
	}
	return strings.Join(rules, " ")
}

// countCategory counts the commands of a category the selector allows
// and denies.
func (s *Selector) countCategory(cat string) (on, off int) {
	for id, c := range table().cmds {
		if inCategory(c, cat) {
			if s.bit(id) {
				on++
			} else {
				off++
			}
		}
	}
	return
}

// describe is the selector as ACL LIST prints it: keys, channels, commands.
func (s *Selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, p := range s.keys {
			b.WriteString(p.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, ch := range s.channels {
			b.WriteString("&" + ch + " ")
		}
	}
	b.WriteString(s.commandRules())
	return b.String()
}

// KeysString and ChannelsString are the "keys" and "channels" fields of
// ACL GETUSER.
func (s *Selector) KeysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, p := range s.keys {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

func (s *Selector) ChannelsString() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, ch := range s.channels {
		parts[i] = "&" + ch
	}
	return strings.Join(parts, " ")
}

// CommandsString is the "commands" field of ACL GETUSER.
func (s *Selector) CommandsString() string { return s.commandRules() }

// Describe is the user's rules as ACL LIST prints them after "user name "
// (made once, by Edit: it takes a good part of a millisecond).
func (u *User) Describe() string { return u.desc }

func (u *User) describe() string {
	var b strings.Builder
	for _, f := range u.Flags() {
		b.WriteString(f + " ")
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for i, s := range u.selectors {
		if i == 0 {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}
