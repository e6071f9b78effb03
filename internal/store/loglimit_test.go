package store

import (
	"testing"
	"time"
)

func TestLogLimit(t *testing.T) {
	l := LogLimit{Period: 50 * time.Millisecond}
	if missed, ok := l.Allow(); !ok || missed != 0 {
		t.Fatalf("first line: allowed %v, missed %d", ok, missed)
	}
	for i := 0; i < 3; i++ {
		if _, ok := l.Allow(); ok {
			t.Fatalf("line %d allowed within the period", i+2)
		}
	}
	time.Sleep(60 * time.Millisecond)
	if missed, ok := l.Allow(); !ok || missed != 3 {
		t.Fatalf("after the period: allowed %v, missed %d (want 3)", ok, missed)
	}
}
