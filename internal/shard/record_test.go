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

// Record.StreamNode is logged only when it is not the defaults, after the
// published counts, so that a record with neither keeps its old form.
func TestRecordStreamNode(t *testing.T) {
	rec := Record{Kind: KindCommand, Time: 7, Seed: 9, Cmds: [][][]byte{{[]byte("XADD"), []byte("s"), []byte("*"), []byte("f"), []byte("v")}}}
	plain := rec.Marshal(nil)
	rec.StreamNode = &DefaultStreamNodeMax
	if got := rec.Marshal(nil); !bytes.Equal(got, plain) {
		t.Fatalf("the default limits change the record's form: %x vs %x", plain, got)
	}
	for _, published := range [][]int64{nil, {3}} {
		rec.StreamNode, rec.Published = &StreamNodeMax{Entries: 0, Bytes: 1 << 20}, published
		got, err := Unmarshal(rec.Marshal(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got.StreamNode == nil || *got.StreamNode != *rec.StreamNode || !slices.Equal(got.Published, published) {
			t.Fatalf("got %+v and %v, want %+v and %v", got.StreamNode, got.Published, *rec.StreamNode, published)
		}
	}
	got, err := Unmarshal(plain)
	if err != nil || got.StreamNode != nil {
		t.Fatalf("a record without limits: %+v, %v", got.StreamNode, err)
	}
}

// Record.ACL follows the published counts and the stream node limits
// (defaults, when the record has none) and is logged only when set.
func TestRecordACL(t *testing.T) {
	for _, published := range [][]int64{nil, {3}} {
		for _, node := range []*StreamNodeMax{nil, {Entries: 5, Bytes: 10}} {
			rec := Record{Kind: KindCommand, Cmds: [][][]byte{{[]byte("EVAL"), []byte("x"), []byte("0")}}, Published: published, StreamNode: node, ACL: "user u on nopass -@all +get"}
			got, err := Unmarshal(rec.Marshal(nil))
			if err != nil {
				t.Fatal(err)
			}
			if got.ACL != rec.ACL || !slices.Equal(got.Published, published) || node != nil && *got.StreamNode != *node {
				t.Fatalf("got ACL %q, Published %v, StreamNode %+v; want %q, %v, %+v", got.ACL, got.Published, got.StreamNode, rec.ACL, published, node)
			}
		}
	}
}
