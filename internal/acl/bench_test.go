package acl

import (
	"strings"
	"testing"
)

func BenchmarkDescribe(b *testing.B) {
	u, _ := Edit(nil, "u", strings.Fields("on >pw ~k* +@read +@write -@dangerous +config|get (~x +set)"), false)
	for b.Loop() {
		u.Describe()
	}
}

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
