package acl

import (
	"strings"
	"testing"
)

// BenchmarkDescribe: making a description (Edit does, once a user).
func BenchmarkDescribe(b *testing.B) {
	u, _ := Edit(nil, "u", strings.Fields("on >pw ~k* +@read +@write -@dangerous +config|get (~x +set)"), false)
	for b.Loop() {
		u.describe()
	}
}

// BenchmarkCheck: the ACL gate for a user that may not run everything.
func BenchmarkCheck(b *testing.B) {
	u, _ := Edit(nil, "u", strings.Fields("on >pw ~k* +@read +@write -@dangerous"), false)
	cmd := lookup("get")
	argv := [][]byte{[]byte("get"), []byte("k1")}
	for b.Loop() {
		if u.Check(cmd, argv).Reason != Allowed {
			b.Fatal("denied")
		}
	}
}
