package concurrency

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// TestPubSubInterleaving publishes from several clients while subscribers
// pipeline commands with big replies: a RESP3 subscriber (GET of a 64 KB
// value, GET, PING) and a RESP2 one (PING, the only command it may send
// but SUBSCRIBE and the like). Every reply must arrive whole and in order,
// with the messages only between replies, each publisher's in order.
func TestPubSubInterleaving(t *testing.T) {
	srv := testutil.StartBasalt(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 4})
	defer rc.Close()
	big := strings.Repeat("0123456789abcdef", 4<<10)
	if err := rc.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}

	const publishers, perPublisher = 3, 1000
	sub3, sub2 := testutil.Dial(t, srv.Addr), testutil.Dial(t, srv.Addr)
	sub3.Do("HELLO", "3")
	for _, c := range []*testutil.Conn{sub3, sub2} {
		if r := c.Do("SUBSCRIBE", "ch"); len(r.Elems) != 3 || r.Elems[2].Int != 1 {
			t.Fatalf("SUBSCRIBE: %v", r)
		}
	}

	var wg sync.WaitGroup
	pubErr := make(chan error, publishers)
	for i := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range perPublisher {
				if err := rc.Publish(ctx, "ch", fmt.Sprintf("%d:%d", i, seq)).Err(); err != nil {
					pubErr <- err
					return
				}
			}
		}()
	}

	// SUBSCRIBE inside MULTI while messages flow (DEBUG SLEEP leaves them
	// time to arrive before EXEC's reply is complete): the EXEC reply comes
	// whole, before any message.
	subx := testutil.Dial(t, srv.Addr)
	var tx []byte
	for _, cmd := range [][]string{{"MULTI"}, {"SUBSCRIBE", "ch"}, {"DEBUG", "SLEEP", "0.05"}, {"EXEC"}} {
		tx = append(tx, testutil.Command(cmd...)...)
	}
	subx.Send(tx)
	for range 3 {
		subx.Read() // OK, QUEUED, QUEUED
	}
	if r := subx.Read(); len(r.Elems) != 2 || len(r.Elems[0].Elems) != 3 || r.Elems[0].Elems[0].Str != "subscribe" {
		t.Fatalf("EXEC of SUBSCRIBE: %v", r)
	}
	for range 50 {
		if r := subx.Read(); len(r.Elems) != 3 || r.Elems[0].Str != "message" {
			t.Fatalf("after EXEC of SUBSCRIBE: %v", r)
		}
	}

	// check follows one subscriber's messages: each publisher's in order.
	type follower struct {
		next []int
		n    int
	}
	check := func(f *follower, r testutil.Reply) {
		t.Helper()
		if len(r.Elems) != 3 || r.Elems[0].Str != "message" || r.Elems[1].Str != "ch" {
			t.Fatalf("not a message: %v", r)
		}
		pub, seq, _ := strings.Cut(r.Elems[2].Str, ":")
		i, _ := strconv.Atoi(pub)
		s, _ := strconv.Atoi(seq)
		if i < 0 || i >= publishers || s != f.next[i] {
			t.Fatalf("message %q out of order: want %v", r.Elems[2].Str, f.next)
		}
		f.next[i]++
		f.n++
	}
	f3 := &follower{next: make([]int, publishers)}
	f2 := &follower{next: make([]int, publishers)}

	// Pipelined batches; replies are told from messages by their type
	// (RESP3: push) or shape (RESP2: ["pong", ""]).
	for batch := 0; batch < 20; batch++ {
		var b3, b2 []byte
		for range 10 {
			b3 = append(b3, testutil.Command("GET", "big")...)
			b3 = append(b3, testutil.Command("GET", "missing")...)
			b3 = append(b3, testutil.Command("PING")...)
			b2 = append(b2, testutil.Command("PING")...)
		}
		sub3.Send(b3)
		sub2.Send(b2)
		for want := 0; want < 30; {
			r := sub3.Read()
			if r.Kind == '>' {
				check(f3, r)
				continue
			}
			switch want % 3 {
			case 0:
				if r.Kind != '$' || r.Str != big {
					t.Fatalf("GET big: %.80v", r)
				}
			case 1:
				if r.Kind != '_' {
					t.Fatalf("GET missing: %v", r)
				}
			case 2:
				if r.String() != "+PONG" {
					t.Fatalf("PING: %v", r)
				}
			}
			want++
		}
		for want := 0; want < 10; {
			r := sub2.Read()
			if len(r.Elems) == 2 && r.Elems[0].Str == "pong" && r.Elems[1].Str == "" {
				want++
				continue
			}
			check(f2, r)
		}
	}
	t.Logf("messages received between replies: RESP3 %d, RESP2 %d of %d", f3.n, f2.n, publishers*perPublisher)
	wg.Wait()
	close(pubErr)
	for err := range pubErr {
		t.Fatal(err)
	}
	// The rest of the messages.
	for f3.n < publishers*perPublisher {
		check(f3, sub3.Read())
	}
	for f2.n < publishers*perPublisher {
		check(f2, sub2.Read())
	}
}
