package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// A ticketing system's seat maps. Each section's seats are a bitfield of 2
// bits per seat (00 available, 10 sold) in seats_bf:{event}:{section}; the
// event's counters are one JSON document event_state:{event}; a booking is
// a hash with a TTL; the first sale of the event is recorded with HSETNX.
// 32 buyers race for the seats: half with WATCH/MULTI/EXEC (read the whole
// section with GETRANGE, pick a free seat, then in one transaction BITFIELD
// SET it sold, JSON.NUMINCRBY the counters, write the booking), half with
// one EVAL doing the same. No seat may be sold twice, and the JSON counters
// must equal what the bitfields say.
const (
	event        = "{e1}"
	seatsPerSect = 64
	buyers       = 32
)

var sections = []string{"A-1", "A-2", "B-1"}

func seatsKey(section string) string { return "seats_bf:" + event + ":" + section }

const stateKey = "event_state:" + event

// sellScript sells seat ARGV[2] of section ARGV[1] if it is free: one
// record, so no WATCH is needed.
const sellScript = `
local seat = tonumber(ARGV[2])
local cur = redis.call('BITFIELD', KEYS[1], 'GET', 'u2', '#' .. seat)[1]
if cur ~= 0 then return 0 end
redis.call('BITFIELD', KEYS[1], 'SET', 'u2', '#' .. seat, 2)
redis.call('JSON.NUMINCRBY', KEYS[2], "$.sections['" .. ARGV[1] .. "'].stats.available", -1)
redis.call('JSON.NUMINCRBY', KEYS[2], "$.sections['" .. ARGV[1] .. "'].stats.sold", 1)
redis.call('HSET', KEYS[3], 'section', ARGV[1], 'seat', ARGV[2], 'buyer', ARGV[3])
redis.call('EXPIRE', KEYS[3], 3600)
redis.call('HSETNX', KEYS[4], 'first_sale', KEYS[3])
return 1`

func TestSeatMap(t *testing.T) {
	runSeatMap(t, []string{testutil.StartBasalt(t, "").Addr})
}

func TestSeatMapCluster(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	runSeatMap(t, addrs)
	c.WaitConverged(t, 20*time.Second)
}

func runSeatMap(t *testing.T, addrs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer admin.Close()
	doc := map[string]any{"sections": map[string]any{}}
	for _, s := range sections {
		doc["sections"].(map[string]any)[s] = map[string]any{"stats": map[string]any{"available": seatsPerSect, "sold": 0}}
		// All seats available: a zeroed bitfield of the section's size.
		if err := admin.SetRange(ctx, seatsKey(s), 0, string(make([]byte, seatsPerSect*2/8))).Err(); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := json.Marshal(doc)
	if err := admin.Do(ctx, "JSON.SET", stateKey, "$", string(body)).Err(); err != nil {
		t.Fatal(err)
	}
	sha, err := admin.ScriptLoad(ctx, sellScript).Result()
	if err != nil {
		t.Fatal(err)
	}

	var bookings, conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, buyers)
	deadline := time.Now().Add(40 * time.Second)
	for b := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := redis.NewClient(&redis.Options{Addr: addrs[b%len(addrs)], PoolSize: 1})
			defer rdb.Close()
			rng := rand.New(rand.NewPCG(uint64(b), 7))
			for attempt := 0; attempt < 200 && time.Now().Before(deadline); attempt++ {
				section := sections[rng.IntN(len(sections))]
				booking := "booking:" + event + ":" + strconv.Itoa(b) + ":" + strconv.Itoa(attempt)
				var ok bool
				var err error
				if b%2 == 0 {
					ok, err = buyWithWatch(ctx, rdb, rng, section, booking, b, &conflicts)
				} else {
					ok, err = buyWithScript(ctx, rdb, rng, sha, section, booking, b)
				}
				if err != nil {
					errs <- fmt.Errorf("buyer %d: %w", b, err)
					return
				}
				if ok {
					bookings.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The end state: per section, the sold seats in the bitfield equal the
	// JSON counters, and the bookings written.
	totalSold := 0
	for _, s := range sections {
		bits, err := admin.GetRange(ctx, seatsKey(s), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		soldHere := 0
		for seat := range seatsPerSect {
			switch v := (bits[seat/4] >> (6 - 2*(seat%4))) & 3; v {
			case 2:
				soldHere++
			case 0:
			default:
				t.Errorf("%s seat %d has state %02b", s, seat, v)
			}
		}
		var stats []map[string]int
		raw, err := admin.Do(ctx, "JSON.GET", stateKey, "$.sections['"+s+"'].stats").Text()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), &stats); err != nil || len(stats) != 1 {
			t.Fatalf("JSON.GET stats of %s: %q %v", s, raw, err)
		}
		if stats[0]["sold"] != soldHere || stats[0]["available"] != seatsPerSect-soldHere {
			t.Errorf("section %s: bitfield says %d sold, JSON says %v", s, soldHere, stats[0])
		}
		totalSold += soldHere
	}
	if int64(totalSold) != bookings.Load() {
		t.Errorf("%d seats sold in the bitfields, %d bookings acknowledged: a seat was sold twice or a sale lost", totalSold, bookings.Load())
	}
	keys, err := admin.Keys(ctx, "booking:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != totalSold {
		t.Errorf("%d booking hashes, %d seats sold", len(keys), totalSold)
	}
	if ttl := admin.TTL(ctx, keys[0]).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("booking TTL %v", ttl)
	}
	if first := admin.HGet(ctx, "first_sale:"+event, "first_sale").Val(); first == "" {
		t.Errorf("no first sale recorded")
	}
	if totalSold < len(sections)*seatsPerSect/2 {
		t.Errorf("only %d of %d seats sold: the workload did too little to prove anything", totalSold, len(sections)*seatsPerSect)
	}
	t.Logf("%d seats sold to %d buyers, %d WATCH conflicts retried", totalSold, buyers, conflicts.Load())
}

// buyWithWatch reads the section, picks a free seat and sells it in a
// transaction that aborts if the section changed meanwhile.
func buyWithWatch(ctx context.Context, rdb *redis.Client, rng *rand.Rand, section, booking string, buyer int, conflicts *atomic.Int64) (bool, error) {
	key := seatsKey(section)
	sold := false
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		bits, err := tx.GetRange(ctx, key, 0, -1).Result()
		if err != nil {
			return err
		}
		var free []int
		for seat := range seatsPerSect {
			if (bits[seat/4]>>(6-2*(seat%4)))&3 == 0 {
				free = append(free, seat)
			}
		}
		if len(free) == 0 {
			return nil
		}
		seat := free[rng.IntN(len(free))]
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.BitField(ctx, key, "SET", "u2", "#"+strconv.Itoa(seat), 2)
			p.Do(ctx, "JSON.NUMINCRBY", stateKey, "$.sections['"+section+"'].stats.available", -1)
			p.Do(ctx, "JSON.NUMINCRBY", stateKey, "$.sections['"+section+"'].stats.sold", 1)
			p.HSet(ctx, booking, "section", section, "seat", seat, "buyer", buyer)
			p.Expire(ctx, booking, time.Hour)
			p.HSetNX(ctx, "first_sale:"+event, "first_sale", booking)
			return nil
		})
		if err == nil {
			sold = true
		}
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		conflicts.Add(1)
		return false, nil
	}
	return sold, err
}

// buyWithScript tries a random seat with one EVALSHA.
func buyWithScript(ctx context.Context, rdb *redis.Client, rng *rand.Rand, sha, section, booking string, buyer int) (bool, error) {
	seat := rng.IntN(seatsPerSect)
	n, err := rdb.EvalSha(ctx, sha, []string{seatsKey(section), stateKey, booking, "first_sale:" + event},
		section, seat, buyer).Int()
	return n == 1, err
}
