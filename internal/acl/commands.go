// Package acl is Redis 7.0's access control: users, their passwords and
// selectors (which commands, keys and channels they may use), the rule
// language of ACL SETUSER, the descriptions ACL LIST and GETUSER print,
// the permission check and the ACL LOG. It knows the command table but
// nothing of the server: the server asks it questions.
package acl

import (
	"slices"
	"strings"
	"sync"

	"basalt/internal/command"
)

// Categories are Redis's ACL categories, in Redis's order (ACL CAT and the
// describe functions follow it): the command table's list.
var Categories = command.ACLCategories

// IsCategory reports whether name (any case) is an ACL category, and gives
// it in lower case.
func IsCategory(name string) (string, bool) {
	for _, c := range Categories {
		if strings.EqualFold(c, name) {
			return c, true
		}
	}
	return "", false
}

// cmdIndex numbers every command and subcommand of the table: a selector
// is a bit set over these numbers. The last number (future) stands for
// the commands a +@all user may run that the table does not list yet.
type cmdIndex struct {
	cmds   []*command.Command // by id
	ids    map[*command.Command]int
	future int
}

var (
	indexOnce sync.Once
	index     cmdIndex
)

// table returns the numbering of the command table, built once.
func table() *cmdIndex {
	indexOnce.Do(func() {
		all := command.All()
		slices.SortFunc(all, func(a, b *command.Command) int { return strings.Compare(a.Name, b.Name) })
		index.ids = map[*command.Command]int{}
		add := func(c *command.Command) {
			index.ids[c] = len(index.cmds)
			index.cmds = append(index.cmds, c)
		}
		for _, c := range all {
			add(c)
			for _, s := range c.Subcommands {
				add(s)
			}
		}
		index.future = len(index.cmds)
	})
	return &index
}

func (t *cmdIndex) words() int { return t.future/64 + 1 }

// lookup finds "cmd" or "cmd|sub" as Redis's ACLLookupCommand does: a
// subcommand only for a command that has subcommands, one level only.
func lookup(name string) *command.Command {
	parent, sub, hasSub := strings.Cut(name, "|")
	cmd := command.Lookup([]byte(parent))
	if cmd == nil || !hasSub {
		return cmd
	}
	if len(cmd.Subcommands) == 0 || strings.Contains(sub, "|") {
		return nil
	}
	return cmd.Subcommand([]byte(sub))
}

// inCategory reports whether an ACL category holds c. Modules' commands
// (RedisJSON's) are in none, as Redis 7.0 has them: only +@all or their
// names allow them, and ACL LIST describes rules as Redis without the
// module does.
func inCategory(c *command.Command, cat string) bool {
	return c.Group != "module" && slices.Contains(c.Categories, cat)
}

// CommandsIn lists the commands of a category, subcommands after their
// parent, for ACL CAT.
func CommandsIn(cat string) []string {
	var out []string
	for _, c := range table().cmds {
		if inCategory(c, cat) {
			out = append(out, c.Name)
		}
	}
	return out
}

// channelArgs are the commands whose arguments name pub/sub channels the
// ACL checks (Redis's commands_with_channels, publish and subscribe kinds
// only): from argument first, all or only one.
var channelArgs = map[string]struct {
	all, pattern bool
}{
	"publish":    {},
	"spublish":   {},
	"subscribe":  {all: true},
	"ssubscribe": {all: true},
	"psubscribe": {all: true, pattern: true},
}
