package crash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"basalt/internal/rdb"
	"basalt/internal/testutil"
)

// rdbKeys reads a whole RDB file and counts its keys; any error (a torn
// or partial file) fails the test.
func rdbKeys(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := rdb.NewFileReader(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("%s after %d keys: %v", path, n, err)
		}
		if rec.Kind == rdb.RecordKey {
			n++
		}
	}
}

// TestCrashDuringBGSAVE kills basalt with SIGKILL while a BGSAVE writes:
// dump.rdb is then the previous save, whole, never a part of the new
// one; the unfinished file is removed at the restart; and every
// acknowledged write is there.
func TestCrashDuringBGSAVE(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	rc := newClient(p.Addr)
	value := strings.Repeat("v", 4096)
	fill := func(from, to int) {
		pipe := rc.Pipeline()
		for i := from; i < to; i++ {
			pipe.Set(ctx, fmt.Sprintf("key:%05d", i), value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fill(0, 1000)
	if err := rc.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(p.Dir, "dump.rdb")
	if n := rdbKeys(t, dump); n != 1000 {
		t.Fatalf("the first save holds %d keys, want 1000", n)
	}
	fill(1000, 20000) // about 80 MB to write: the save takes a while
	rc.Close()

	cut := 0
	for round := range 5 {
		rc := newClient(p.Addr)
		if err := rc.BgSave(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(round*20) * time.Millisecond)
		temps, _ := filepath.Glob(filepath.Join(p.Dir, "temp-*.rdb"))
		cut += len(temps)
		p.Kill()
		rc.Close()
		if n := rdbKeys(t, dump); n != 1000 && n != 20000 {
			t.Fatalf("round %d: dump.rdb holds %d keys: neither the old save nor the new one", round, n)
		}
		p.Restart(t)
		if temps, _ := filepath.Glob(filepath.Join(p.Dir, "temp-*.rdb")); len(temps) > 0 {
			t.Errorf("round %d: the restart left %v", round, temps)
		}
		rc = newClient(p.Addr)
		if n, err := rc.DBSize(ctx).Result(); err != nil || n != 20000 {
			t.Fatalf("round %d: DBSIZE %d (%v), want every acknowledged key: 20000", round, n, err)
		}
		rc.Close()
	}
	if cut == 0 {
		t.Error("no kill came while a save was writing: the test proved nothing")
	}
}
