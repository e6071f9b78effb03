package store

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestViewOneInstant takes views while every commit adds a key and swaps
// databases 0 and 1: each view's key counts must be what its snapshot
// holds, and its database map the one its snapshot stored, which a
// snapshot taken beside the in-memory map and counts does not guarantee.
func TestViewOneInstant(t *testing.T) {
	st := openStore(t)
	const now = 1000
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tx := st.WriteTx()
			tx.Now = now
			tx.Put([]byte(fmt.Sprintf("k%d", i)), Meta{Type: TypeString, Body: []byte("v")})
			tx.Swap(0, 1)
			if err := tx.Commit(false); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	deadline := time.Now().Add(2 * time.Second)
	for views := 0; views < 2000 && time.Now().Before(deadline); views++ {
		v, err := st.View(now)
		if err != nil {
			t.Fatal(err)
		}
		for db := 0; db < 2; db++ {
			stored, ok := v.Tx.get(dbMapKey(db))
			if phys := v.Tx.dbMap[db]; ok && int(binary.BigEndian.Uint16(stored)) != phys {
				v.Tx.Close()
				t.Fatalf("view %d: db %d is physical %d in the snapshot, %d in the view's map", views, db, binary.BigEndian.Uint16(stored), phys)
			}
			v.Tx.DB = db
			var n int64
			v.Tx.Scan(0, 1<<30, func([]byte, Meta) { n++ })
			if n != v.Keys[db] {
				v.Tx.Close()
				t.Fatalf("view %d: db %d holds %d keys, its count says %d", views, db, n, v.Keys[db])
			}
		}
		v.Tx.Close()
	}
}
