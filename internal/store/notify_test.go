package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestNotifyFlags checks notify-keyspace-events parsing and CONFIG GET's
// rendering against what redis-server 7.0 answers.
func TestNotifyFlags(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"", ""}, {"K", "K"}, {"g", "g"}, {"A", "A"}, {"KEA", "AKE"}, {"KEAn", "AKE"},
		{"Em", "Em"}, {"mn", "nm"}, {"KEg$lshzxetd", "AKE"}, {"KEg$lshzxetdmn", "AKEm"},
		{"KEg$lshzxtd", "g$lshzxtdKE"}, {"KEz", "zKE"}, {"AA", "A"}, {"nEK", "nKE"},
	} {
		f, err := ParseNotifyFlags(c.in)
		if err != nil || f.String() != c.out {
			t.Errorf("%q: %q %v, want %q", c.in, f.String(), err, c.out)
		}
	}
	for _, bad := range []string{"q", "KEq", "k", "a", " ", "K E"} {
		if _, err := ParseNotifyFlags(bad); err != ErrNotifyClass {
			t.Errorf("%q: %v, want %v", bad, err, ErrNotifyClass)
		}
	}
}

// TestNotifyEvents checks the events the store raises itself: "expired"
// when a write finds an expired key (lazily, or by writing over it),
// "new" when a key is created, none for Overwrite, none for a batch that
// is dropped, and that they go out only when the batch commits.
func TestNotifyEvents(t *testing.T) {
	st := openStore(t)
	var got []string
	st.SetNotify(NotifyKeyspace|NotifyAll|NotifyNew|NotifyKeyMiss, func(_ NotifyFlags, events []Event) {
		for _, e := range events {
			got = append(got, fmt.Sprintf("%d:%s=%s", e.DB, e.Key, e.Name))
		}
	})
	const now = 1_000_000
	str := func(expireAt int64) Meta { return Meta{Type: TypeString, ExpireAt: expireAt, Body: []byte("v")} }
	write := func(commit bool, fn func(tx *Tx)) {
		t.Helper()
		tx := st.WriteTx()
		tx.Now = now
		fn(tx)
		if !commit {
			tx.Close()
			return
		}
		if err := tx.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: events %s, want %s", what, strings.Join(got, " "), strings.Join(want, " "))
		}
		got = nil
	}

	write(true, func(tx *Tx) {
		tx.Put([]byte("a"), str(0))
		tx.Put([]byte("a"), str(0))
		tx.Put([]byte("e1"), str(now-1))
		tx.Put([]byte("e2"), str(now-1))
		tx.Put([]byte("e3"), str(now-1))
		tx.DB = 1
		tx.Put([]byte("b"), str(0))
		tx.Notify(NotifyString, "set", []byte("b"))
		expect("before the commit")
	})
	expect("created", "0:a=new", "0:e1=new", "0:e2=new", "0:e3=new", "1:b=new", "1:b=set")

	write(true, func(tx *Tx) {
		tx.Lookup([]byte("e1"))                    // lazy expiry
		tx.Put([]byte("e2"), str(0))               // written over
		tx.Delete([]byte("e3"))                    // deleted: expired, no del
		tx.Lookup([]byte("nosuch"))                // a write's lookup: no keymiss
		tx.Overwrite([]byte("a"))                  // *STORE: not new
		tx.Put([]byte("a"), str(0))                //
		tx.Overwrite([]byte("a"))                  // emptied...
		tx.Put([]byte("other"), str(0))            // ...another key is new
		tx.Put([]byte("a"), str(0))                // and so is a afterwards
		tx.Publish([]byte("ch"), []byte("m"), nil) // in order with the events
		tx.Notify(NotifyHash, "hset", []byte("a"))
	})
	expect("expiry and creation", "0:e1=expired", "0:e2=expired", "0:e2=new", "0:e3=expired",
		"0:other=new", "0:a=new", "0:ch=m", "0:a=hset")

	write(false, func(tx *Tx) { tx.Put([]byte("dropped"), str(0)) })
	expect("dropped batch")

	tx := st.ReadTx(0, now, false)
	tx.Lookup([]byte("nosuch"))
	tx.Lookup([]byte("a"))
	prev := tx.KeyMiss(false)
	tx.Lookup([]byte("quiet"))
	tx.KeyMiss(prev)
	expect("read before Close")
	tx.Close()
	expect("read", "0:nosuch=keymiss")

	st.SetNotify(NotifyAll, nil) // no K or E: nothing collected
	write(true, func(tx *Tx) { tx.Put([]byte("c"), str(0)) })
	expect("off")
}
