package lsm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// The hard cases of DeleteRange, each checked while the tombstone is in
// the memtable, after a flush and after a compaction (stages): Get,
// MultiGet and iterators in both directions must agree with the model.

// stages runs check, then flushes and checks, then compacts and checks.
func stages(t *testing.T, d *DB, check func(stage string)) {
	t.Helper()
	check("memtable")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("flushed")
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted")
}

// expect checks r's whole state against want: Get of every key of keys,
// a forward and a backward scan.
func expect(t *testing.T, stage string, r reader, keys []string, want model) {
	t.Helper()
	for _, k := range keys {
		v, err := r.Get([]byte(k))
		w, ok := want[k]
		if ok != (err == nil) || ok && string(v) != w || !ok && !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: Get(%q) = %q, %v; want %q, %v", stage, k, v, err, w, ok)
		}
	}
	it := r.NewIter(nil)
	defer it.Close()
	var fwd, back []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, string(it.Key()))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, string(it.Key()))
	}
	slices.Reverse(back)
	all := want.sortedRange(nil, nil)
	if !slices.Equal(fwd, all) || !slices.Equal(back, all) || it.Err() != nil {
		t.Fatalf("%s: scans\n fwd  %q\n back %q\n want %q (err %v)", stage, fwd, back, all, it.Err())
	}
}

func letters(from, to byte) []string {
	var ks []string
	for c := from; c <= to; c++ {
		ks = append(ks, string(c))
	}
	return ks
}

func putAll(t *testing.T, d *DB, keys []string, m model, value string) {
	t.Helper()
	for _, k := range keys {
		if err := d.Put([]byte(k), []byte(value+k)); err != nil {
			t.Fatal(err)
		}
		m[k] = value + k
	}
}

func TestDeleteRangeInvalid(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	for _, r := range [][2]string{{"b", "a"}, {"a", "a"}, {"", ""}} {
		if err := d.DeleteRange([]byte(r[0]), []byte(r[1])); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("DeleteRange(%q, %q) = %v, want ErrInvalidRange", r[0], r[1], err)
		}
	}
	long := []byte(strings.Repeat("k", MaxKeySize+1))
	if err := d.DeleteRange(nil, long); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("DeleteRange to a key over MaxKeySize = %v, want ErrInvalidKey", err)
	}
	var b Batch
	b.Put([]byte("a"), nil)
	b.DeleteRange([]byte("z"), []byte("a"))
	if err := d.Write(&b); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("batch with an empty range: %v, want ErrInvalidRange", err)
	}
	if _, err := d.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a failed batch wrote its put: %v", err)
	}
}

// TestDeleteRangeSnapshot: a range tombstone newer than a snapshot is
// invisible to it, in the memtable, after a flush and after a compaction
// (which must keep the versions the snapshot sees).
func TestDeleteRangeSnapshot(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	keys := letters('a', 'j')
	before := model{}
	putAll(t, d, keys, before, "v")
	s := d.NewSnapshot()
	defer s.Close()
	if err := d.DeleteRange([]byte("c"), []byte("g")); err != nil {
		t.Fatal(err)
	}
	after := before.clone()
	after.deleteRange([]byte("c"), []byte("g"))
	stages(t, d, func(stage string) {
		expect(t, stage+", snapshot", s, keys, before)
		expect(t, stage, d, keys, after)
	})
	s.Close()
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	expect(t, "snapshot closed, compacted", d, keys, after)
}

// TestDeleteRangeNewerPut: a put newer than a covering tombstone is
// found, an older one is not, in one batch as in separate writes.
func TestDeleteRangeNewerPut(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	keys := letters('a', 'f')
	m := model{}
	putAll(t, d, keys, m, "old")
	if err := d.DeleteRange([]byte("a"), []byte("z")); err != nil {
		t.Fatal(err)
	}
	m = model{}
	if err := d.Put([]byte("b"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	m["b"] = "new"
	// One batch: the range deletion, then a put of a key inside it, which
	// is newer (its own sequence number) and survives.
	var b Batch
	b.Put([]byte("x"), []byte("gone"))
	b.DeleteRange([]byte("d"), []byte("y"))
	b.Put([]byte("e"), []byte("batch"))
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	m["e"] = "batch"
	stages(t, d, func(stage string) { expect(t, stage, d, append(keys, "x"), m) })
}

// TestDeleteRangeEdges: the empty key and an end beyond every key.
func TestDeleteRangeEdges(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	keys := []string{"", "\x00", "a", "\xff\xff"}
	m := model{}
	putAll(t, d, keys, m, "v")
	if err := d.DeleteRange(nil, []byte("\x00")); err != nil { // the empty key only
		t.Fatal(err)
	}
	delete(m, "")
	stages(t, d, func(stage string) { expect(t, stage, d, keys, m) })
	if err := d.DeleteRange([]byte("\x00"), []byte("\xff\xff\xff")); err != nil {
		t.Fatal(err)
	}
	m = model{}
	stages(t, d, func(stage string) { expect(t, stage, d, keys, m) })
}

// TestDeleteRangeIterReverse: iterators that change direction inside a
// deleted span, with and without bounds.
func TestDeleteRangeIterReverse(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	putAll(t, d, letters('a', 'z'), model{}, "v")
	if err := d.DeleteRange([]byte("f"), []byte("p")); err != nil {
		t.Fatal(err)
	}
	stages(t, d, func(stage string) {
		it := d.NewIter(nil)
		defer it.Close()
		var got []string
		step := func(op string, ok bool) {
			k := "-"
			if ok {
				k = string(it.Key())
			}
			got = append(got, op+":"+k)
		}
		step("SeekGE h", it.SeekGE([]byte("h")))
		step("Prev", it.Prev())
		step("Next", it.Next())
		step("SeekLT k", it.SeekLT([]byte("k")))
		step("Next", it.Next())
		step("Prev", it.Prev())
		step("Prev", it.Prev())
		want := "SeekGE h:p Prev:e Next:p SeekLT k:e Next:p Prev:e Prev:d"
		if s := strings.Join(got, " "); s != want {
			t.Fatalf("%s:\n got %s\nwant %s", stage, s, want)
		}
		in := d.NewIter(&IterOptions{LowerBound: []byte("g"), UpperBound: []byte("o")})
		defer in.Close()
		if in.First() || in.Last() || in.SeekGE([]byte("h")) || in.SeekLT([]byte("k")) {
			t.Fatalf("%s: an iterator inside the deleted span found %q", stage, in.Key())
		}
	})
}

// TestDeleteRangeManyTables: a tombstone spanning many tables of the last
// level, compacted while a snapshot needs what it covers (so the outputs
// keep both, and each output carries the part of the span over its own
// range), then again once the snapshot is gone. Reopening, a read-only
// open, a checkpoint and Repair all honour it.
func TestDeleteRangeManyTables(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{MemtableSize: 8 << 10, TargetFileSize: 4 << 10, BlockSize: 512}
	d := openMem(t, mem, opts)
	var keys []string
	for i := range 600 {
		keys = append(keys, fmt.Sprintf("k%04d", i))
	}
	m := model{}
	putAll(t, d, keys, m, strings.Repeat("v", 64))
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	s := d.NewSnapshot()
	before := m.clone()
	if err := d.DeleteRange([]byte("k0100"), []byte("k0500")); err != nil {
		t.Fatal(err)
	}
	m.deleteRange([]byte("k0100"), []byte("k0500"))
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	expect(t, "snapshot open", s, keys, before)
	expect(t, "compacted", d, keys, m)
	withSpans := 0
	v := d.vs.Current()
	for _, f := range v.Levels[NumLevels-1] {
		if s, _ := f.RangeDels(); s.Len() > 0 {
			withSpans++
		}
	}
	v.Unref()
	if withSpans < 3 {
		t.Fatalf("%d last-level tables carry the tombstone, want it cut across several:\n%v", withSpans, d.vs.Current())
	}
	s.Close()
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	expect(t, "snapshot closed, compacted", d, keys, m)
	// Nothing is below the last level and no snapshot is open: the
	// covered entries and the tombstone itself are gone.
	v = d.vs.Current()
	var entries uint64
	for _, f := range v.Levels[NumLevels-1] {
		if s, _ := f.RangeDels(); s.Len() > 0 {
			t.Errorf("table %v still holds %v", f, s.At(0))
		}
		entries += f.NumEntries
	}
	v.Unref()
	if entries != uint64(len(m)) {
		t.Errorf("the last level holds %d entries, %d keys live", entries, len(m))
	}
	if err := d.DeleteRange([]byte("k0000"), []byte("k0050")); err != nil { // in the memtable only
		t.Fatal(err)
	}
	m.deleteRange([]byte("k0000"), []byte("k0050"))
	if err := d.Checkpoint("/ckpt"); err != nil {
		t.Fatal(err)
	}
	c, err := Open("/ckpt", &Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "checkpoint", c, keys, m)
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{}, {ReadOnly: true}} {
		o.FS = mem
		r, err := Open("/db", &o)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, fmt.Sprintf("reopened, read-only %v", o.ReadOnly), r, keys, m)
		r.Close()
	}
	if _, err := Repair("/db", &Options{FS: mem}); err != nil {
		t.Fatal(err)
	}
	r := openMem(t, mem, nil)
	expect(t, "repaired", r, keys, m)
	r.Close()
}

// TestDeleteRangeAboveTheBottom: a tombstone compacted into a level above
// tables that hold what it covers must stay there, however many
// compactions pass: only at the bottom (no table below overlaps it) may
// it go.
func TestDeleteRangeAboveTheBottom(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{MemtableSize: 8 << 10, TargetFileSize: 8 << 10, LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2, BlockSize: 512}
	d := openMem(t, mem, opts)
	defer d.Close()
	var keys []string
	for i := range 3000 {
		keys = append(keys, fmt.Sprintf("k%05d", i))
	}
	m := model{}
	putAll(t, d, keys, m, strings.Repeat("v", 100))
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	// 200 keys: a range covering more than the levels' targets makes its
	// level due by itself (compaction.RangeDelBytes) and goes straight to
	// the bottom, which is not what this test is about.
	if err := d.DeleteRange([]byte("k01000"), []byte("k01200")); err != nil {
		t.Fatal(err)
	}
	m.deleteRange([]byte("k01000"), []byte("k01200"))
	// Writes elsewhere push the tombstone down through compactions that
	// leave the last level be.
	for round := range 6 {
		var more []string
		for i := range 400 {
			more = append(more, fmt.Sprintf("k%05d", 3000+round*400+i))
		}
		putAll(t, d, more, m, strings.Repeat("w", 100))
		keys = append(keys, more...)
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	d.waitIdle()
	v := d.vs.Current()
	shape := v.String()
	above := false
	for level := 1; level < NumLevels-1; level++ {
		for _, f := range v.Levels[level] {
			if s, _ := f.RangeDels(); s.Len() > 0 {
				above = true
			}
		}
	}
	v.Unref()
	if !above {
		t.Logf("the tombstone is not above the last level; the test proves less:\n%s", shape)
	}
	expect(t, "compacted in the background", d, keys, m)
}

// TestDeleteRangeExplain: Explain shows the range tombstone that decided
// a read, after the source whose version it deletes, and says why the key
// is not found.
func TestDeleteRangeExplain(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.Put([]byte("b"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteRange([]byte("a"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	tr, err := d.Explain([]byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	got := tr.String()
	for _, want := range []string{`1. active memtable: covered by ["a", "c")#2`, "=> not found (range tombstone)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("trace lacks %q:\n%s", want, got)
		}
	}
	if tr.Result != ResultRangeDeleted {
		t.Fatalf("result %v", tr.Result)
	}
}

// TestDeleteRangeOnlyTable: a flush of nothing but a range tombstone
// writes a table of it alone, whose bounds cover the range (the end, which
// is exclusive, counts as its last key unless it ends in 0x00).
func TestDeleteRangeOnlyTable(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, nil)
	defer d.Close()
	for _, r := range [][3]string{{"a", "c", "c"}, {"x", "y\x00", "y"}} {
		if err := d.DeleteRange([]byte(r[0]), []byte(r[1])); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		v := d.vs.Current()
		f := v.Levels[0][0]
		v.Unref()
		if f.NumEntries != 0 || string(f.Smallest.UserKey) != r[0] || string(f.Largest.UserKey) != r[2] {
			t.Fatalf("table of [%q, %q): %v, %d entries", r[0], r[1], f, f.NumEntries)
		}
		if s, known := f.RangeDels(); !known || s.Len() != 1 {
			t.Fatalf("table of [%q, %q) holds %d spans (known %v)", r[0], r[1], s.Len(), known)
		}
	}
	expect(t, "tables of range tombstones only", d, []string{"a", "b", "c", "y"}, model{})
}
