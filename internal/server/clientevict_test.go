package server

import "testing"

// maxmemory-clients in bytes, as Redis 7.0's getClientEvictionLimit reads it.
func TestClientMemLimit(t *testing.T) {
	for _, c := range []struct {
		clients   string
		maxmemory int64
		want      int64
	}{
		{"0", 1 << 30, 0},                  // off
		{"0%", 1 << 30, 0},                 // off
		{"1048576", 0, 1 << 20},            // bytes
		{"1024", 0, minClientMemLimit},     // raised to 128 KB
		{"10%", 1 << 30, (1 << 30) / 10},   // of maxmemory
		{"1%", 1 << 20, minClientMemLimit}, // raised too
		{"10%", 0, 1<<63 - 1},              // no maxmemory: no limit
	} {
		if got := clientMemLimit(Config{MaxMemoryClients: c.clients, MaxMemory: c.maxmemory}); got != c.want {
			t.Errorf("maxmemory-clients %s with maxmemory %d: %d, want %d", c.clients, c.maxmemory, got, c.want)
		}
	}
}
