package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/cpuclock"
	"github.com/monbandb/monban/vfs"
)

// intKey is the 8-byte big-endian key of i: what a range filter is for.
func intKey(i uint64) string { return string(binary.BigEndian.AppendUint64(nil, i)) }

// rangeKeys draws the keys of a range model test: sparse 8-byte integers,
// and in the mixed run also short keys and long keys that share their
// first 8 bytes (one point for many keys, where the filter must say
// maybe), all in one order. A third of the keys are ones written before
// (a slice, not the model's map, so that a seed replays): deletes then
// hit keys that older tables hold, and ranges start at them, which is
// where a table holding only the deletion must not be skipped.
type rangeKeys struct {
	rng     *rand.Rand
	mixed   bool
	written *[]string
}

func (k rangeKeys) key() string {
	if w := *k.written; len(w) > 0 && k.rng.IntN(3) == 0 {
		return w[k.rng.IntN(len(w))]
	}
	i := k.rng.Uint64N(20000)
	if !k.mixed {
		return intKey(i)
	}
	switch k.rng.IntN(4) {
	case 0:
		return intKey(i)[:1+k.rng.IntN(7)]
	case 1:
		return intKey(i%64) + fmt.Sprintf("/%d", k.rng.IntN(50))
	default:
		return intKey(i)
	}
}

// bounds draws an iterator's bounds: mostly the range of 1 to 64
// integers from a key, sometimes two keys in either order (an empty or
// inverted range).
func (k rangeKeys) bounds() (lo, hi []byte) {
	if k.rng.IntN(8) == 0 {
		return []byte(k.key()), []byte(k.key())
	}
	lo = []byte(k.key())
	var pad [8]byte
	x := binary.BigEndian.Uint64(append(slices.Clone(lo), pad[:]...))
	return lo, binary.BigEndian.AppendUint64(nil, x+1+k.rng.Uint64N(64))
}

// rangeView is one consistent view, read through the DB with range
// filters, the DB without, and the model.
type rangeView struct {
	on, off reader
	m       model
	close   func()
}

// TestRangeIterMatchesModel runs random writes, deletes, range deletes,
// snapshots, flushes, compactions and reopens against two DBs, one with
// range filters and one without, and a map; and checks bounded
// iterators over both DBs and their snapshots against the model's keys,
// forward, backward and on a random walk. Some tables must be skipped.
// MONBAN_STEPS lengthens it; MONBAN_SEED replays a failure.
func TestRangeIterMatchesModel(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		t.Run(map[bool]string{false: "int", true: "mixed"}[mixed], func(t *testing.T) {
			seed := modelSeed(t)
			steps := 2000
			if testing.Short() || raceEnabled {
				steps = 600
			}
			if s := os.Getenv("MONBAN_STEPS"); s != "" {
				steps, _ = strconv.Atoi(s)
			}
			rng := rand.New(rand.NewPCG(seed, 3))
			keys := rangeKeys{rng: rng, mixed: mixed, written: new([]string)}
			base := Options{MemtableSize: 1 << 10, BlockSize: 128, TargetFileSize: 1 << 10,
				LBaseMaxBytes: 4 << 10, L0CompactionThreshold: 2, L0StopWritesThreshold: 8,
				PinnedMetaLimit: []int64{0, -1}[rng.IntN(2)]}
			onOpts, offOpts := base, base
			onOpts.FS, offOpts.FS = vfs.NewMem(), vfs.NewMem()
			onOpts.RangeFilter = filter.GrafiteOptions{BitsPerKey: []int{16, 16, 10, 3}[rng.IntN(4)], RangeLen: []uint64{0, 1, 8, 1000}[rng.IntN(4)]}
			on, err := Open("/db", &onOpts)
			if err != nil {
				t.Fatal(err)
			}
			off, err := Open("/db", &offOpts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { on.Close(); off.Close() }()
			m := model{}
			var snaps []rangeView
			defer func() {
				for _, s := range snaps {
					s.close()
				}
			}()
			var probes, skips uint64 // Stats count since Open: summed across reopens
			for step := range steps {
				fail := func(op string, err error) { t.Fatalf("seed %d step %d: %s: %v", seed, step, op, err) }
				both := func(op string, f func(d *DB) error) {
					for _, d := range []*DB{on, off} {
						if err := f(d); err != nil {
							fail(op, err)
						}
					}
				}
				switch r := rng.IntN(100); {
				case r < 45:
					k, v := keys.key(), fmt.Sprintf("v%d", step)
					both("Put", func(d *DB) error { return d.Put([]byte(k), []byte(v)) })
					m[k] = v
					*keys.written = append(*keys.written, k)
				case r < 58:
					k := keys.key()
					both("Delete", func(d *DB) error { return d.Delete([]byte(k)) })
					delete(m, k)
				case r < 61:
					lo, hi := keys.bounds()
					if string(lo) >= string(hi) {
						continue
					}
					both("DeleteRange", func(d *DB) error { return d.DeleteRange(lo, hi) })
					m.deleteRange(lo, hi)
				case r < 64:
					if len(snaps) == 3 {
						snaps[0].close()
						snaps = snaps[1:]
					}
					son, soff := on.NewSnapshot(), off.NewSnapshot()
					snaps = append(snaps, rangeView{on: son, off: soff, m: m.clone(), close: func() { son.Close(); soff.Close() }})
				case r < 90:
					views := append([]rangeView{{on: on, off: off, m: m}}, snaps...)
					checkRange(t, seed, step, keys, views[rng.IntN(len(views))])
				case r < 95:
					both("Flush", func(d *DB) error { return d.Flush() })
				case r < 98:
					both("Compact", func(d *DB) error { return d.Compact() })
				default:
					for _, s := range snaps {
						s.close()
					}
					snaps = nil
					st := on.Stats()
					probes, skips = probes+st.RangeProbes, skips+st.RangeSkips
					both("Close", func(d *DB) error { return d.Close() })
					if on, err = Open("/db", &onOpts); err != nil {
						fail("reopen", err)
					}
					if off, err = Open("/db", &offOpts); err != nil {
						fail("reopen", err)
					}
				}
			}
			checkRange(t, seed, steps, keys, rangeView{on: on, off: off, m: m})
			st := on.Stats()
			probes, skips = probes+st.RangeProbes, skips+st.RangeSkips
			t.Logf("seed %d: %+v, L0..L6 files %v, range filters asked %d, skipped %d", seed, onOpts.RangeFilter, levelFiles(st), probes, skips)
			if !mixed && onOpts.RangeFilter.BitsPerKey == 16 && onOpts.RangeFilter.RangeLen != 1 && skips == 0 {
				t.Errorf("seed %d: no table skipped in %d probes", seed, probes)
			}
			if offSt := off.Stats(); offSt.RangeProbes != 0 {
				t.Errorf("seed %d: the DB without range filters asked %d", seed, offSt.RangeProbes)
			}
		})
	}
}

// checkRange iterates v over random bounds through both DBs and compares
// each with the model's keys in the bounds, and walks the filtered one.
func checkRange(t *testing.T, seed uint64, step int, keys rangeKeys, v rangeView) {
	t.Helper()
	lo, hi := keys.bounds()
	want := v.m.sortedRange(lo, hi)
	backward := keys.rng.IntN(2) == 0
	for _, r := range []reader{v.on, v.off} {
		it := r.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
		got := iterKeys(t, it, backward, v.m, fmt.Sprintf("seed %d step %d: [%x, %x)", seed, step, lo, hi))
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d step %d: [%x, %x) (range filters %t, backward %v):\n got %x\nwant %x",
				seed, step, lo, hi, r == v.on, backward, got, want)
		}
		if r == v.on {
			walkAgainst(t, keys.rng, it, want, keys.key, fmt.Sprintf("seed %d step %d: walk in [%x, %x)", seed, step, lo, hi))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// iterKeys runs it from its first key to its end, or from its last to
// its start when backward, and returns the keys in order; forward, it
// checks each value against m. where names the run in a failure.
func iterKeys(t *testing.T, it *Iter, backward bool, m model, where string) []string {
	t.Helper()
	var got []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			got = append(got, string(it.Key()))
		}
		slices.Reverse(got)
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
			if string(it.Value()) != m[string(it.Key())] {
				t.Fatalf("%s: value of %q = %q, model %q", where, it.Key(), it.Value(), m[string(it.Key())])
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return got
}

// fillInts writes the keys 0, 2, …, 2(n−1) in flushes of 1000 and
// compacts them, then writes an L0 table over the same range.
func fillInts(t *testing.T, d *DB, n uint64) {
	t.Helper()
	for i := range n {
		if err := d.Put([]byte(intKey(2*i)), []byte("value-of-some-bytes")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < n; i += 50 {
		if err := d.Put([]byte(intKey(2*i)), []byte("again")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
}

// scanCounted runs an iterator of d with o to its end and returns the
// keys it yields, the data blocks its tables looked up, and the Stats
// before and after.
func scanCounted(t testing.TB, d *DB, o *IterOptions) (keys int, blocks uint64, before, after Stats) {
	t.Helper()
	before = d.Stats()
	blocksBefore := dataBlockLookups(t, d)
	it := d.NewIter(o)
	for range it.All() {
		keys++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return keys, dataBlockLookups(t, d) - blocksBefore, before, d.Stats()
}

// scanRange iterates d over the integer keys [lo, hi) and returns the keys
// seen, the data blocks looked up, and the range counters' increase.
func scanRange(t *testing.T, d *DB, lo, hi uint64) (keys int, blocks uint64, st Stats) {
	t.Helper()
	keys, blocks, before, st := scanCounted(t, d, &IterOptions{LowerBound: []byte(intKey(lo)), UpperBound: []byte(intKey(hi))})
	st.RangeProbes -= before.RangeProbes
	st.RangeSkips -= before.RangeSkips
	return keys, blocks, st
}

// TestRangeEmptySkipsTables fills a DB with the even integers up to
// 20,000, as one L6 run and an L0 table over the same range, and
// iterates over runs of odd integers: inside both tables' key ranges, and
// holding no key. The range filters rule out nearly every table; a range
// holding keys reads its blocks.
func TestRangeEmptySkipsTables(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{RangeFilter: filter.GrafiteOptions{BitsPerKey: 16}, BlockSize: 256,
		MemtableSize: 64 << 10, TargetFileSize: 16 << 10, TargetFileSizeMultiplier: 1, Compression: NoCompression})
	defer d.Close()
	fillInts(t, d, 10000)
	var probes, skips, blocks uint64
	for i := uint64(1); i < 20000; i += 200 {
		// [i, i+1): one odd integer. The range filter sees [i, i].
		keys, b, st := scanRange(t, d, i, i+1)
		if keys != 0 {
			t.Fatalf("[%d, %d) holds %d keys", i, i+1, keys)
		}
		probes, skips, blocks = probes+st.RangeProbes, skips+st.RangeSkips, blocks+b
	}
	t.Logf("100 empty ranges: %d range filters asked, %d tables skipped, %d data blocks", probes, skips, blocks)
	// 16 bits a key, and the 32-byte header and the block trailer a table.
	st := d.Stats()
	tables := 0
	for _, n := range levelFiles(st) {
		tables += n
	}
	if got := st.Total.RangeFilterBytes; got < 10000*2 || got > 10200*2+uint64(100*tables) {
		t.Errorf("range filters of %d bytes in %d tables for 10,200 entries at 16 bits per key", got, tables)
	}
	if probes < 100 || skips < probes-2 || blocks > 2 {
		t.Errorf("empty ranges: %d of %d tables skipped, %d data blocks read; want all but a false positive or two", skips, probes, blocks)
	}
	if keys, b, _ := scanRange(t, d, 100, 132); keys != 16 || b == 0 {
		t.Errorf("[100, 132): %d keys, %d data blocks; want 16, at least 1", keys, b)
	}
}

// TestRangeSkippedTableStillDeletes: a table whose only entry in a
// range is a range tombstone has no point key there, so its range filter
// rules the range out and the iterator skips its points; the tombstone
// must still delete the older key it covers in another table, because
// the iterator takes every table's tombstones from the read state, not
// from the tables it reads.
func TestRangeSkippedTableStillDeletes(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{RangeFilter: filter.GrafiteOptions{BitsPerKey: 16}})
	defer d.Close()
	for _, k := range []uint64{1000, 5000} {
		if err := d.Put([]byte(intKey(k)), []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	// A newer table: the tombstone over 1000 and point keys away from it.
	if err := d.DeleteRange([]byte(intKey(990)), []byte(intKey(1010))); err != nil {
		t.Fatal(err)
	}
	for _, k := range []uint64{900, 1100} {
		if err := d.Put([]byte(intKey(k)), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Levels[0].Files != 1 {
		t.Fatalf("L0 holds %d tables, want the newer one", st.Levels[0].Files)
	}
	keys, _, st := scanRange(t, d, 995, 1005)
	if keys != 0 {
		t.Fatalf("[995, 1005): %d keys, want 1000 deleted", keys)
	}
	if st.RangeSkips == 0 {
		t.Fatalf("the newer table was not skipped (%d probes): the test tests nothing", st.RangeProbes)
	}
	if keys, _, _ := scanRange(t, d, 895, 1105); keys != 2 {
		t.Fatalf("[895, 1105): %d keys, want 900 and 1100", keys)
	}
}

// TestRangeOldTablesNeverSkipped writes tables without range filters and
// reopens the DB with them: every table is asked and none ruled out, and
// every key is found; so with the filters ignored, which asks none.
func TestRangeOldTablesNeverSkipped(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{BlockSize: 256})
	fillInts(t, d, 2000)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ignore := range []bool{false, true} {
		d = openMem(t, fs, &Options{BlockSize: 256, RangeFilter: filter.GrafiteOptions{BitsPerKey: 16}, IgnoreFilters: ignore})
		for i := uint64(0); i < 4000; i += 100 {
			keys, _, st := scanRange(t, d, i, i+32)
			if keys != 16 || st.RangeSkips != 0 || (st.RangeProbes == 0) != ignore {
				t.Fatalf("ignore %t: [%d, %d): %d keys, %d of %d tables skipped; want 16 keys, none skipped", ignore, i, i+32, keys, st.RangeSkips, st.RangeProbes)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRangeFilterOptions: bits per key outside 3..40 are refused.
func TestRangeFilterOptions(t *testing.T) {
	for _, bits := range []int{-1, 2, 41} {
		_, err := Open("/db", &Options{FS: vfs.NewMem(), RangeFilter: filter.GrafiteOptions{BitsPerKey: bits}})
		if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("RangeFilter.BitsPerKey %d: %v, want ErrInvalidOptions", bits, err)
		}
	}
}

// rangeBenchDB opens a DB in a temporary directory holding the integer
// keys 64·i for i < benchKeys (values of 100 bytes), written in a random
// order, flushed and compacted.
func rangeBenchDB(b *testing.B, opts *Options) *DB {
	b.Helper()
	d, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	fillRangeBench(b, d, benchKeys)
	if err := d.Compact(); err != nil {
		b.Fatal(err)
	}
	return d
}

// fillRangeBench puts the integer keys 64·i for i < n, in a random
// order, one Put each.
func fillRangeBench(b *testing.B, d *DB, n uint64) {
	val := make([]byte, 100)
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(int(n)) {
		if err := d.Put([]byte(intKey(64*uint64(i))), val); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRangeMiss iterates over empty ranges of 32 adjacent integers
// ([64·i + 16, 64·i + 48), between two keys, inside a table's key range),
// with range filters of 16 bits per key and without: data blocks looked
// up per scan, and the scan's CPU.
func BenchmarkRangeMiss(b *testing.B) {
	for _, c := range []struct {
		name string
		rf   filter.GrafiteOptions
	}{{"range-filter-16", filter.GrafiteOptions{BitsPerKey: 16, RangeLen: 32}}, {"no-range-filter", filter.GrafiteOptions{}}} {
		b.Run(c.name, func(b *testing.B) {
			d := rangeBenchDB(b, &Options{RangeFilter: c.rf})
			rng := rand.New(rand.NewPCG(1, 2))
			blocks, before := dataBlockLookups(b, d), d.Stats()
			defer cpuClock(b)()
			for b.Loop() {
				lo := 64*rng.Uint64N(benchKeys) + 16
				it := d.NewIter(&IterOptions{LowerBound: []byte(intKey(lo)), UpperBound: []byte(intKey(lo + 32))})
				if it.First() {
					b.Fatalf("[%d, %d): found %x", lo, lo+32, it.Key())
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
			}
			after := d.Stats()
			b.ReportMetric(float64(dataBlockLookups(b, d)-blocks)/float64(b.N), "data-blocks/op")
			b.ReportMetric(float64(after.RangeSkips-before.RangeSkips)/float64(b.N), "range-skips/op")
		})
	}
}

// BenchmarkRangeFill writes 100,000 integer keys, flushes and compacts
// them, with range filters of 16 bits per key and without: the process's
// CPU per key, background flushes and compactions included, which is
// where the filters are built.
func BenchmarkRangeFill(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name string
		rf   filter.GrafiteOptions
	}{{"range-filter-16", filter.GrafiteOptions{BitsPerKey: 16, RangeLen: 32}}, {"no-range-filter", filter.GrafiteOptions{}}} {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				start := cpuclock.Process()
				d, err := Open(b.TempDir(), &Options{RangeFilter: c.rf})
				if err != nil {
					b.Fatal(err)
				}
				fillRangeBench(b, d, n)
				if err := d.Compact(); err != nil {
					b.Fatal(err)
				}
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
				cpu += cpuclock.Process() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/put")
		})
	}
}
