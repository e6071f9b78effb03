package crash

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"basalt/internal/testutil"
)

// raftLogBounds is the first and last index of the node's Raft log.
func raftLogBounds(t *testing.T, addr string) (first, last int64) {
	t.Helper()
	st := testutil.Status(addr)
	first, _ = strconv.ParseInt(st["log_first_index"], 10, 64)
	last, _ = strconv.ParseInt(st["log_last_index"], 10, 64)
	if first == 0 || last == 0 {
		t.Fatalf("RAFT STATUS without log bounds: %v", st)
	}
	return first, last
}

// TestLogRetainBytes writes values of 64 KB one at a time (an entry each)
// to a server whose Raft log may keep 1 MB: the log keeps about the last
// 16 entries, not all of them, and after SIGKILL and a restart every value
// is still there and the bound still holds.
func TestLogRetainBytes(t *testing.T) {
	const size, keep = 64 << 10, 1 << 20
	srv := testutil.StartBasalt(t, "", "--log-retain-bytes", "1mb")
	ctx := context.Background()
	value := func(i int) string { return fmt.Sprintf("%06d", i) + strings.Repeat("v", size-6) }
	write := func(rc *redis.Client, from, to int) {
		for i := from; i < to; i++ {
			if err := rc.Set(ctx, fmt.Sprint("big:", i), value(i), 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each step of the compaction drops at least an eighth of the budget,
	// so the log holds up to 9/8 of it, plus the entries of this test's
	// other commands.
	const most = keep*9/8/size + 4
	check := func(written int) {
		t.Helper()
		first, last := raftLogBounds(t, srv.Addr)
		if held := last - first + 1; held > most || first == 1 {
			t.Fatalf("after %d writes of %d bytes the log holds entries %d..%d (%d), want at most %d", written, size, first, last, held, most)
		}
	}

	rc := newClient(srv.Addr)
	write(rc, 0, 80)
	check(80)
	rc.Close()

	srv.Kill()
	srv.Restart(t)
	rc = newClient(srv.Addr)
	defer rc.Close()
	for i := range 80 {
		got, err := rc.Get(ctx, fmt.Sprint("big:", i)).Result()
		if err != nil || !bytes.Equal([]byte(got), []byte(value(i))) {
			t.Fatalf("big:%d after the restart: %d bytes, %v", i, len(got), err)
		}
	}
	write(rc, 80, 160)
	check(160)
}
