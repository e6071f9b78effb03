package compat

import (
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// A client refused for maxclients gets Redis's error, and the log says
// who was refused and why, once: a flood of them is one line per 10 s.
func TestLogRefusedClient(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	// The start's readiness probe may still count as a client for a moment.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(c.Do("INFO", "clients").Str, "connected_clients:1\r\n"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("other clients than this one stay connected")
		}
	}
	if r := c.Do("CONFIG", "SET", "maxclients", "1"); r.String() != "+OK" {
		t.Fatalf("CONFIG SET maxclients 1: %v", r)
	}
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		reply, _ := io.ReadAll(nc)
		nc.Close()
		if string(reply) != "-ERR max number of clients reached\r\n" {
			t.Fatalf("refused client %d got %q", i, reply)
		}
	}
	var text string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		raw, _ := os.ReadFile(b.Log)
		if text = string(raw); strings.Contains(text, "refused a client") {
			break
		}
	}
	if n := strings.Count(text, "refused a client"); n != 1 {
		t.Fatalf("%d lines of a refused client, want 1:\n%s", n, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "refused a client") && !(strings.Contains(line, "level=notice") && strings.Contains(line, "why=maxclients") && strings.Contains(line, "addr=127.0.0.1:")) {
			t.Errorf("refused client's line lacks its level, reason or address: %s", line)
		}
	}
}
