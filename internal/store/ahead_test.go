package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMembersAhead runs random writes of every kind (set, delete, hold,
// range delete, a whole new Tx) between reads in both directions that stop
// after a few members, and checks that each read through MembersAhead
// finds what Members finds: a read-ahead that a write in its span leaves
// stale fails it.
func TestMembersAhead(t *testing.T) {
	st := openStore(t)
	key := []byte("s")
	sub := func(i int) []byte { return []byte(fmt.Sprintf("e%03d", i)) }
	r := rand.New(rand.NewPCG(7, 9))
	tx := st.WriteTx()
	tx.Put(key, Meta{Type: TypeHash})
	for i := 0; i < 200; i += 2 {
		tx.SetMember(key, sub(i), []byte("v0"))
	}
	// Reads mostly start where the last one stopped, as a group's
	// consumers or a run of RPOPs do, and writes land mostly just ahead.
	served, pos, reverse := 0, 0, false
	for round := range 6000 {
		if r.IntN(50) == 0 {
			reverse = !reverse
		}
		if r.IntN(5) == 0 || pos < 0 || pos >= 200 {
			pos = r.IntN(200)
		}
		from, to := sub(pos), []byte("f")
		if reverse {
			from, to = []byte("e"), append(sub(pos), 0)
		}
		stop := 1 + r.IntN(4)
		var want, got []string
		tx.MembersAhead(key, from, to, reverse, 8, func(s, v []byte) bool {
			got = append(got, string(s)+"="+string(v))
			return len(got) < stop
		})
		if tx.ahead != nil {
			served++
		}
		// Members second: it saves held members, which would hide a
		// read-ahead that missed one.
		tx.Members(key, from, to, reverse, func(s, v []byte) bool {
			want = append(want, string(s)+"="+string(v))
			return len(want) < stop
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d from %s to %q reverse %v: MembersAhead %v, Members %v", round, from, to, reverse, got, want)
		}
		step := 1
		if reverse {
			step = -1
		}
		if len(got) > 0 {
			fmt.Sscanf(got[len(got)-1], "e%03d", &pos)
			pos += step
		}
		v := []byte(fmt.Sprintf("v%d", round))
		switch i := pos + step*r.IntN(12); r.IntN(7) {
		case 0:
			tx.SetMember(key, sub(i), v)
		case 1, 5:
			tx.DeleteMember(key, sub(i))
		case 2:
			tx.HoldMember(key, sub(i), v)
		case 3:
			tx.DeleteMemberRange(key, sub(i), sub(i+3))
		case 4:
			if err := tx.Commit(false); err != nil {
				t.Fatal(err)
			}
			tx = st.WriteTx()
		}
	}
	if served == 0 {
		t.Fatal("no read was left with a read-ahead")
	}
	tx.Close()
}
