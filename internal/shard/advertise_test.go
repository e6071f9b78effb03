package shard

import "testing"

func TestClientAddr(t *testing.T) {
	for _, a := range []ClientAddr{
		{Forward: "10.0.0.1:6379", Host: "10.0.0.1", Port: 6379},
		{Forward: "10.0.0.1:6380", Host: "10.0.0.1", Port: 6379, TLSPort: 6380},
		{Forward: "10.0.0.1:6379", Host: "10.0.0.1", Port: 6379, TLSPort: 6380},
		{Forward: "[::1]:6380", Host: "::1", TLSPort: 6380},
	} {
		s := a.String()
		if got := ParseClientAddr(s); got != a {
			t.Errorf("ParseClientAddr(%q) = %+v, want %+v", s, got, a)
		}
	}
	if s := (ClientAddr{Forward: "h:1", Host: "h", Port: 1}).String(); s != "h:1" {
		t.Errorf("a node without a TLS port advertises %q, not its address alone", s)
	}
	for _, s := range []string{"", "no-port"} {
		if a := ParseClientAddr(s); a != (ClientAddr{}) {
			t.Errorf("ParseClientAddr(%q) = %+v, want zero", s, a)
		}
	}
	// A name a later version adds is skipped.
	if a := ParseClientAddr("h:2 later=3 port=1 tls-port=2"); a != (ClientAddr{Forward: "h:2", Host: "h", Port: 1, TLSPort: 2}) {
		t.Errorf("with a name it does not know: %+v", a)
	}
}
