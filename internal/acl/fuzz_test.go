package acl

import (
	"strings"
	"testing"
)

// FuzzRules feeds SETUSER rules to the parser: it must never panic, and a
// user it accepts must describe itself as rules that give the same user.
func FuzzRules(f *testing.F) {
	for _, seed := range []string{
		"on >pass ~k* &ch +get",
		"%R~r* %W~w* %RW~x resetkeys allkeys",
		"+@all -@dangerous +config|get -debug",
		"+select|0 (~x +set) clearselectors",
		"(~a %R~b &c +@read) (allkeys -@all +ping)",
		"#d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1 !d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1",
		"reset nopass resetpass allchannels resetchannels &* % %R %Q~x ( )",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		u, err := Edit(nil, "u", strings.Fields(rules), false)
		if err != nil {
			return
		}
		desc := u.Describe()
		if strings.ContainsAny(desc, `"'`) {
			return // quotes in patterns do not read back, in Redis either
		}
		again, err := Edit(nil, "u", strings.Fields(desc), false)
		if err != nil {
			t.Fatalf("%q describes as %q, which fails: %v", rules, desc, err)
		}
		if d := again.Describe(); d != desc {
			t.Fatalf("%q describes as %q, read back as %q", rules, desc, d)
		}
	})
}
