package acl

import (
	"strings"
	"testing"
)

func TestEditDescribe(t *testing.T) {
	cases := []struct{ rules, want string }{
		{"", "off resetchannels -@all"},
		{"on >pass ~k* &ch +get", "on #d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1 ~k* resetchannels &ch -@all +get"},
		{"on nopass allkeys allchannels allcommands -config", "on nopass ~* &* +@all -config"},
		{"%R~r* %W~w* ~b* %RW~r*", "off ~r* %W~w* ~b* resetchannels -@all"},
		{"+@read -@dangerous", "off resetchannels -@all +@read -keys -sort_ro"},
		{"+select|0 (~x +set)", "off resetchannels -@all +select|0 (~x resetchannels -@all +set)"},
		{"+@all reset", "off sanitize-payload resetchannels -@all"},
	}
	for _, c := range cases {
		u, err := Edit(nil, "u", strings.Fields(c.rules), false)
		if err != nil {
			t.Fatalf("%q: %v", c.rules, err)
		}
		if got := u.Describe(); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.rules, got, c.want)
		}
	}
}

func TestEditErrors(t *testing.T) {
	cases := []struct{ rules, want string }{
		{"+nosuch", "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"},
		{"bogus", "Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{"allkeys ~x", "Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{"&* &x", "Error in ACL SETUSER modifier '&x': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"},
		{"<nope", "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist"},
		{"#abc", "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{"+config|get|x", "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{"(~x +get", "Unmatched parenthesis in acl selector starting at '(~x'."},
		{"(~x +nosuch)", "Error in ACL SETUSER modifier '(~x +nosuch)': Unknown command or category name in ACL"},
	}
	for _, c := range cases {
		_, err := Edit(nil, "u", strings.Fields(c.rules), false)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v\nwant %s", c.rules, err, c.want)
		}
	}
}
