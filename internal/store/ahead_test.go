package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMembersAhead runs random writes of every kind (set, delete, hold,
// range delete, a whole new Tx) between reads that stop after a few
// members, and checks that each read through MembersAhead finds what
// Members finds: a read-ahead that outlives a write in its span fails it.
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
	// consumers do, and writes land mostly just ahead of them.
	served, pos := 0, 0
	for round := range 3000 {
		if r.IntN(5) == 0 || pos >= 200 {
			pos = r.IntN(210)
		}
		from, stop := sub(pos), 1+r.IntN(4)
		var want, got []string
		tx.MembersAhead(key, from, []byte("f"), 8, func(s, v []byte) bool {
			got = append(got, string(s)+"="+string(v))
			return len(got) < stop
		})
		ahead := tx.ahead != nil
		// Members second: it saves held members, and would hide a
		// read-ahead that missed one.
		tx.Members(key, from, []byte("f"), false, func(s, v []byte) bool {
			want = append(want, string(s)+"="+string(v))
			return len(want) < stop
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d from %s: MembersAhead %v, Members %v", round, from, got, want)
		}
		if ahead {
			served++
		}
		if len(got) > 0 {
			fmt.Sscanf(got[len(got)-1], "e%03d", &pos)
			pos++
		}
		v := []byte(fmt.Sprintf("v%d", round))
		switch i := pos + r.IntN(12); r.IntN(6) {
		case 0:
			tx.SetMember(key, sub(i), v)
		case 1:
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
