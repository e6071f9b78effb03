package crash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// bitmapSpan is the range of bit offsets the bitmap writers use: 128 KB of
// string, so basalt stores each bitmap in chunks, most of them sparse.
const bitmapSpan = 1 << 20

// bitWriter sets fresh bits of its own bitmap to 1 with SETBIT, one at a
// time. sent holds every offset it sent, acked those answered.
type bitWriter struct {
	key         string
	rng         *rand.Rand
	sent, acked map[int64]bool
}

func (w *bitWriter) run(ctx context.Context, addr string, stop <-chan struct{}, errs chan<- error) {
	rc := newClient(addr)
	defer rc.Close()
	for {
		select {
		case <-stop:
			return
		default:
		}
		off := w.rng.Int64N(bitmapSpan)
		if w.sent[off] {
			continue
		}
		w.sent[off] = true
		old, err := rc.SetBit(ctx, w.key, off, 1).Result()
		if err != nil {
			if serverErr(err) {
				errs <- fmt.Errorf("%s: SETBIT %d: %w", w.key, off, err)
			}
			return
		}
		if old != 0 {
			errs <- fmt.Errorf("%s: SETBIT %d answered %d for a fresh bit", w.key, off, old)
			return
		}
		w.acked[off] = true
	}
}

// TestCrashBitmaps kills basalt (appendfsync always) in the middle of
// SETBITs on chunked bitmaps: after each restart every acknowledged bit is
// set, and every bit set was sent.
func TestCrashBitmaps(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 12))
	p := testutil.StartBasalt(t, "", "--appendfsync", "always")
	ws := make([]*bitWriter, 4)
	for i := range ws {
		ws[i] = &bitWriter{key: "bm:" + strconv.Itoa(i), rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i))),
			sent: map[int64]bool{}, acked: map[int64]bool{}}
	}
	ctx := context.Background()
	start := time.Now()
	for cycle := 1; cycle <= 3 && !t.Failed() && time.Since(start) < 12*time.Second; cycle++ {
		stop := make(chan struct{})
		errs := make(chan error, len(ws))
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(ctx, p.Addr, stop, errs)
			}()
		}
		time.Sleep(time.Duration(150+rng.IntN(500)) * time.Millisecond)
		p.Kill()
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("cycle %d: %v", cycle, err)
		}
		p.Restart(t)

		rc := newClient(p.Addr)
		acked := 0
		for _, w := range ws {
			acked += len(w.acked)
			v, err := rc.Get(ctx, w.key).Bytes()
			if err != nil && len(w.acked) > 0 {
				t.Fatalf("cycle %d: GET %s: %v", cycle, w.key, err)
			}
			for off := range w.acked {
				if off>>3 >= int64(len(v)) || v[off>>3]&(0x80>>(off&7)) == 0 {
					t.Errorf("cycle %d: %s: acknowledged bit %d lost", cycle, w.key, off)
				}
			}
			for i, b := range v {
				for j := range 8 {
					if off := int64(i)*8 + int64(j); b&(0x80>>j) != 0 && !w.sent[off] {
						t.Errorf("cycle %d: %s: bit %d set but never sent", cycle, w.key, off)
					}
				}
			}
			// What the server holds is the truth from here on: an
			// in-flight SETBIT either made it or not.
			for off := range w.sent {
				if off>>3 < int64(len(v)) && v[off>>3]&(0x80>>(off&7)) != 0 {
					w.acked[off] = true
				} else {
					delete(w.sent, off)
				}
			}
		}
		rc.Close()
		if acked == 0 {
			t.Fatalf("cycle %d: no SETBIT acknowledged", cycle)
		}
		t.Logf("cycle %d: %d bits acknowledged in all", cycle, acked)
	}
}
