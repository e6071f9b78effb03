package shard

import (
	"bytes"
	"slices"
	"testing"
)

// Record.Published is logged only when a script published: other records
// keep the form older nodes read.
func TestRecordPublished(t *testing.T) {
	rec := Record{Kind: KindCommand, Time: 7, Seed: 9, Cmds: [][][]byte{{[]byte("EVAL"), []byte("x"), []byte("0")}}}
	plain := rec.Marshal(nil)
	rec.Published = []int64{2, 0, 1}
	with := rec.Marshal(nil)
	if !bytes.HasPrefix(with, plain) || len(with) == len(plain) {
		t.Fatalf("published counts change the record's form: %x vs %x", plain, with)
	}
	for _, b := range [][]byte{plain, with} {
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		want := rec.Published
		if len(b) == len(plain) {
			want = nil
		}
		if !slices.Equal(got.Published, want) {
			t.Fatalf("Published = %v, want %v", got.Published, want)
		}
	}
	if _, err := Unmarshal(append(with, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

// Record.ACL follows the published counts (none, when no script
// published) and is logged only when set.
func TestRecordACL(t *testing.T) {
	for _, published := range [][]int64{nil, {3}} {
		rec := Record{Kind: KindCommand, Cmds: [][][]byte{{[]byte("EVAL"), []byte("x"), []byte("0")}}, Published: published, ACL: "user u on nopass -@all +get"}
		got, err := Unmarshal(rec.Marshal(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got.ACL != rec.ACL || !slices.Equal(got.Published, published) {
			t.Fatalf("got ACL %q, Published %v; want %q, %v", got.ACL, got.Published, rec.ACL, published)
		}
	}
}
