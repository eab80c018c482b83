package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/vfs"
)

// fixedSplit cuts a key after its first n bytes (the whole of a shorter
// key), as a fixed-width tenant or table id would.
func fixedSplit(name string, n int) *filter.Split {
	return &filter.Split{Name: name, Len: func(k []byte) int { return min(len(k), n) }}
}

// sepSplit cuts a key after its first '/', or keeps all of a key without
// one: "ab/x" has the prefix "ab/", and "ab" and "abc" are their own
// prefixes, so "abc" starts with the prefix "ab" without being one of its
// keys. Monotone: two keys first differ at a byte the cut of neither
// precedes.
var sepSplit = &filter.Split{Name: "sep", Len: func(k []byte) int {
	if i := bytes.IndexByte(k, '/'); i >= 0 {
		return i + 1
	}
	return len(k)
}}

// prefixKey draws a key of one to five bytes over an alphabet of four, so
// that keys share prefixes, and many keys are prefixes of others.
func prefixKey(rng *rand.Rand) string {
	const alphabet = "ab/." // '.' sorts just below '/'
	b := make([]byte, 1+rng.IntN(5))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// TestPrefixIterMatchesModel runs random writes, range deletes, flushes,
// compactions and reopens against a DB with a Split and a map, and checks
// iterators bounded to prefixes, present and absent, forward, backward
// and on a random walk, against the model's keys of that prefix.
// MONBAN_STEPS lengthens it; MONBAN_SEED replays a failure.
func TestPrefixIterMatchesModel(t *testing.T) {
	for _, split := range []*filter.Split{fixedSplit("fixed2", 2), sepSplit} {
		t.Run(split.Name, func(t *testing.T) {
			seed := modelSeed(t)
			steps := 2000
			if testing.Short() {
				steps = 600
			}
			if s := os.Getenv("MONBAN_STEPS"); s != "" {
				steps, _ = strconv.Atoi(s)
			}
			rng := rand.New(rand.NewPCG(seed, 2))
			opts := &Options{
				FS: vfs.NewMem(), Split: split, MemtableSize: 1 << 10, BlockSize: 128, TargetFileSize: 1 << 10,
				LBaseMaxBytes: 4 << 10, L0CompactionThreshold: 2, L0StopWritesThreshold: 8,
				PinnedMetaLimit: []int64{0, -1}[rng.IntN(2)],
			}
			d, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { d.Close() }()
			m := model{}
			// Stats count since Open: these add up the runs between reopens.
			var probes, skips uint64
			for step := range steps {
				fail := func(op string, err error) { t.Fatalf("seed %d step %d: %s: %v", seed, step, op, err) }
				switch r := rng.IntN(100); {
				case r < 45:
					k, v := prefixKey(rng), fmt.Sprintf("v%d", step)
					if err := d.Put([]byte(k), []byte(v)); err != nil {
						fail("Put", err)
					}
					m[k] = v
				case r < 60:
					k := prefixKey(rng)
					if err := d.Delete([]byte(k)); err != nil {
						fail("Delete", err)
					}
					delete(m, k)
				case r < 63:
					lo, hi := prefixKey(rng), prefixKey(rng)
					if lo == hi {
						continue
					}
					if lo > hi {
						lo, hi = hi, lo
					}
					if err := d.DeleteRange([]byte(lo), []byte(hi)); err != nil {
						fail("DeleteRange", err)
					}
					m.deleteRange([]byte(lo), []byte(hi))
				case r < 90:
					checkPrefixes(t, seed, step, rng, d, split, m)
				case r < 95:
					if err := d.Flush(); err != nil {
						fail("Flush", err)
					}
				case r < 98:
					if err := d.Compact(); err != nil {
						fail("Compact", err)
					}
				default:
					st := d.Stats()
					probes, skips = probes+st.PrefixProbes, skips+st.PrefixSkips
					if err := d.Close(); err != nil {
						fail("Close", err)
					}
					if d, err = Open("/db", opts); err != nil {
						fail("reopen", err)
					}
				}
			}
			checkPrefixes(t, seed, steps, rng, d, split, m)
			st := d.Stats()
			probes, skips = probes+st.PrefixProbes, skips+st.PrefixSkips
			t.Logf("seed %d: %d flushes since the last Open, L0..L6 files %v, prefix filters asked %d, skipped %d",
				seed, st.Flushes, levelFiles(st), probes, skips)
			if skips == 0 {
				t.Errorf("seed %d: no memtable or table skipped in %d probes", seed, probes)
			}
		})
	}
}

// checkPrefixes iterates d over the prefix of a random key (present or
// not), sometimes within random bounds, and compares it with m's keys of
// that prefix.
func checkPrefixes(t *testing.T, seed uint64, step int, rng *rand.Rand, d *DB, split *filter.Split, m model) {
	t.Helper()
	p := split.Prefix([]byte(prefixKey(rng)))
	o := &IterOptions{Prefix: p}
	if rng.IntN(4) == 0 {
		o.LowerBound = []byte(prefixKey(rng))
	}
	if rng.IntN(4) == 0 {
		o.UpperBound = []byte(prefixKey(rng))
	}
	var want []string
	for _, k := range m.sortedRange(o.LowerBound, o.UpperBound) {
		if bytes.Equal(split.Prefix([]byte(k)), p) {
			want = append(want, k)
		}
	}
	it := d.NewIter(o)
	defer it.Close()
	backward := rng.IntN(2) == 0
	got := iterKeys(t, it, backward, m, fmt.Sprintf("seed %d step %d: prefix %q", seed, step, p))
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d step %d: prefix %q in [%q,%q) (backward %v):\n got %q\nwant %q",
			seed, step, p, o.LowerBound, o.UpperBound, backward, got, want)
	}
	walkAgainst(t, rng, it, want, func() string { return prefixKey(rng) },
		fmt.Sprintf("seed %d step %d: walk over prefix %q in [%q,%q)", seed, step, p, o.LowerBound, o.UpperBound))
}

// TestPrefixOtherSplitNeverSkips writes tables with no Split, or with a
// Split of another Name that cuts keys shorter, and reopens the DB with
// Split "b": its filters hold no prefix of "b"'s (or hold "a"'s, of other
// lengths), and every table must be read, never skipped on their word.
func TestPrefixOtherSplitNeverSkips(t *testing.T) {
	for _, before := range []*filter.Split{nil, fixedSplit("a", 1), fixedSplit("a", 2)} {
		name := "none"
		if before != nil {
			name = fmt.Sprintf("%s-len%d", before.Name, before.Len([]byte("xxxx")))
		}
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			d := openMem(t, fs, &Options{Split: before})
			var want []string
			for i := range 200 {
				k := fmt.Sprintf("%c%c%03d", 'a'+i%3, 'a'+i%5, i)
				if err := d.Put([]byte(k), []byte("v")); err != nil {
					t.Fatal(err)
				}
				if k[:2] == "bc" {
					want = append(want, k)
				}
				if i%50 == 49 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			slices.Sort(want)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openMem(t, fs, &Options{Split: fixedSplit("b", 2)})
			defer d.Close()
			it := d.NewIter(&IterOptions{Prefix: []byte("bc")})
			var got []string
			for k := range it.All() {
				got = append(got, string(k))
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("prefix bc:\n got %q\nwant %q", got, want)
			}
			// The one source the reopened DB built with "b" is its empty
			// memtable, which may be skipped; no table may.
			if st := d.Stats(); st.PrefixSkips > 1 {
				t.Errorf("%d sources skipped, all but the memtable built with another split", st.PrefixSkips)
			}
		})
	}
}

// TestPrefixAbsentSkipsTables fills a DB with the even users' keys,
// flushes and compacts it, adds an L0 table over the same range, and
// iterates over an odd user's prefix, which lies inside the L0 table's key
// range and one L6 table's (the others the bounds rule out): the filter
// of each rules it out, and no data block is read or even looked up in
// the cache. A present prefix reads its blocks.
func TestPrefixAbsentSkipsTables(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{Split: fixedSplit("user", 8), BlockSize: 256,
		MemtableSize: 16 << 10, TargetFileSize: 8 << 10, TargetFileSizeMultiplier: 1, Compression: NoCompression})
	defer d.Close()
	for u := 0; u < 400; u += 2 {
		for i := range 10 {
			if err := d.Put(fmt.Appendf(nil, "user%04d/%02d", u, i), bytes.Repeat([]byte("v"), 20)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	// And an L0 table over the same range.
	for u := 0; u < 400; u += 4 {
		if err := d.Put(fmt.Appendf(nil, "user%04d/99", u), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	scan := func(prefix string) (keys int, blocks uint64, st Stats) {
		t.Helper()
		keys, blocks, before, st := scanCounted(t, d, &IterOptions{Prefix: []byte(prefix)})
		st.PrefixProbes -= before.PrefixProbes
		st.PrefixSkips -= before.PrefixSkips
		return keys, blocks, st
	}
	keys, blocks, st := scan("user0101")
	t.Logf("absent prefix: %d filters asked, %d skipped, %d data blocks, tables per level %v", st.PrefixProbes, st.PrefixSkips, blocks, levelFiles(st))
	if keys != 0 || blocks != 0 || st.PrefixSkips == 0 || st.PrefixSkips != st.PrefixProbes {
		t.Errorf("absent prefix: %d keys, %d data blocks, %d of %d sources skipped; want 0, 0, all of them",
			keys, blocks, st.PrefixSkips, st.PrefixProbes)
	}
	if keys, blocks, _ := scan("user0100"); keys != 11 || blocks == 0 {
		t.Errorf("present prefix: %d keys, %d data blocks; want 11, at least 1", keys, blocks)
	}
}

// dataBlockLookups sums the data blocks the DB's open tables have looked
// up in the block cache or read from their files for iterators (a Get's
// are counted per level in Stats, not by the table: sstable, invariant 8).
func dataBlockLookups(t testing.TB, d *DB) uint64 {
	t.Helper()
	rs := d.loadReadState()
	defer rs.unref()
	var n uint64
	for _, level := range rs.version.Levels {
		for _, f := range level {
			r, release, ok := d.tables.Peek(f.FileNum)
			if !ok {
				continue
			}
			st := r.Stats()
			release()
			n += st.CacheHits + st.BlocksRead
		}
	}
	return n
}

// TestPrefixNeedsSplit: an iterator bounded to a prefix of a DB without a
// Split cannot tell a key's prefix, and says so.
func TestPrefixNeedsSplit(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	it := d.NewIter(&IterOptions{Prefix: []byte("a")})
	if it.First() || !errors.Is(it.Err(), ErrInvalidOptions) || !errors.Is(it.Close(), ErrInvalidOptions) {
		t.Fatalf("Prefix without Split: Err %v, want ErrInvalidOptions", it.Err())
	}
}

// TestPrefixIgnoreFilters: with the filters ignored, a prefix iterator
// asks none, and still finds the prefix's keys in memtables and tables.
func TestPrefixIgnoreFilters(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{Split: fixedSplit("f1", 1), IgnoreFilters: true})
	defer d.Close()
	for _, k := range []string{"a1", "b1", "b2"} {
		if err := d.Put([]byte(k), nil); err != nil {
			t.Fatal(err)
		}
		if k == "b1" {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	it := d.NewIter(&IterOptions{Prefix: []byte("b")})
	var got []string
	for k := range it.All() {
		got = append(got, string(k))
	}
	if err := it.Close(); err != nil || !slices.Equal(got, []string{"b1", "b2"}) {
		t.Fatalf("prefix b: %q, %v; want [b1 b2]", got, err)
	}
	if st := d.Stats(); st.PrefixProbes != 0 {
		t.Errorf("%d filters asked under IgnoreFilters", st.PrefixProbes)
	}
}
