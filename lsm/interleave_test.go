package lsm

import (
	"errors"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// These tests replay, step by step, the interleavings that once let a
// reader see what no prefix of the commits holds (package doc, invariant
// 1): each pauses the engine between two steps with a test hook and reads
// from inside the pause.

// getString returns key's value, "" for ErrNotFound, or the error's text:
// the hooks run inside the engine, where a t.Fatal would leave it stuck.
func getString(r interface{ Get([]byte) ([]byte, error) }, key string) string {
	v, err := r.Get([]byte(key))
	switch {
	case errors.Is(err, ErrNotFound):
		return ""
	case err != nil:
		return "error: " + err.Error()
	}
	return string(v)
}

// iterValues returns every key's value through a fresh iterator.
func iterValues(t *testing.T, it *Iter) map[string]string {
	t.Helper()
	got := map[string]string{}
	for k, v := range it.All() {
		got[string(k)] = string(v)
	}
	if err := it.Close(); err != nil {
		t.Error(err)
	}
	return got
}

// TestDeleteInvisibleBeforePublish: a batch {Put(a), Delete(k)} whose
// delete meets k's only put in the active memtable is in the memtable but
// not yet published. A reader at the old sequence number — Get, an
// iterator, a snapshot taken in the window — still sees k and not a.
func TestDeleteInvisibleBeforePublish(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	var snap *Snapshot
	d.hooks.beforePublish = func() {
		d.hooks.beforePublish = nil
		if k, a := getString(d, "k"), getString(d, "a"); k != "v" || a != "" {
			t.Errorf("Get in the window: k = %q, a = %q; want k = v, a absent", k, a)
		}
		if got := iterValues(t, d.NewIter(nil)); len(got) != 1 || got["k"] != "v" {
			t.Errorf("iterator in the window saw %v, want only k=v", got)
		}
		snap = d.NewSnapshot()
	}
	var b Batch
	b.Put([]byte("a"), []byte("1"))
	b.Delete([]byte("k"))
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	// The snapshot keeps the state before the batch for good.
	mustGet(t, snap, "k", "v")
	mustGet(t, snap, "a", "")
	mustGet(t, d, "k", "")
	mustGet(t, d, "a", "1")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	mustGet(t, snap, "k", "v")
	mustGet(t, snap, "a", "")
}

// TestReadStateBeforeSequenceNumber: Put(k,v1); Flush; Put(k,v2); a reader
// starts; Put(k,v3) and a Flush run before the reader has both its read
// state and its sequence number. The flush drops v2 (shadowed by v3, no
// snapshot), so a reader whose sequence number predates v3 but whose read
// state does not would fall through to v1. The reader must see v2 or v3.
func TestReadStateBeforeSequenceNumber(t *testing.T) {
	for _, via := range []string{"Get", "NewIter"} {
		t.Run(via, func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), nil)
			defer d.Close()
			put := func(v string) {
				if err := d.Put([]byte("k"), []byte(v)); err != nil {
					t.Error(err)
				}
			}
			put("v1")
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			put("v2")
			d.hooks.betweenReadLoads = func() {
				d.hooks.betweenReadLoads = nil
				put("v3")
				if err := d.Flush(); err != nil {
					t.Error(err)
				}
			}
			var got string
			if via == "Get" {
				v, err := d.Get([]byte("k"))
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				got = string(v)
			} else {
				got = iterValues(t, d.NewIter(nil))["k"]
			}
			if got != "v2" && got != "v3" {
				t.Fatalf("%s read k = %q, want v2 or v3", via, got)
			}
		})
	}
}
