package sstable

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// evenKeys returns n keys "k000000", "k000002", ...: the odd keys between
// them are absent but inside the table's key range.
func evenKeys(n int) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i] = entry{base.MakeInternalKey([]byte(fmt.Sprintf("k%06d", 2*i)), base.SeqNum(i+1), base.KindSet), []byte("value")}
	}
	return es
}

// TestFalsePositivesCostReads checks the accounting kvbench reports as
// "disk reads saved": for absent keys inside the key range, every filter
// "maybe" is a false positive and costs exactly one data-block read (from
// the file, or a cache hit when the block is cached), and every "no" costs
// none.
func TestFalsePositivesCostReads(t *testing.T) {
	const n = 20000
	data, _ := buildTable(t, evenKeys(n), WriterOptions{BloomBitsPerKey: 10})
	for _, c := range []*Cache{nil, cache.New(8 << 20)} {
		r := openTable(t, data, c)
		for i := 0; i < n-1; i++ {
			k := []byte(fmt.Sprintf("k%06d", 2*i+1))
			if _, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); found || err != nil {
				t.Fatalf("absent %s: found=%v err=%v", k, found, err)
			}
		}
		s := r.Stats()
		if s.FilterProbes != n-1 || s.FilterNegatives+s.FilterFalsePositives != s.FilterProbes {
			t.Fatalf("stats %+v: probes must be %d = negatives + false positives", s, n-1)
		}
		if s.BlocksRead+s.CacheHits != s.FilterFalsePositives {
			t.Fatalf("stats %+v: data-block reads %d (file %d + cache %d) != false positives %d",
				s, s.BlocksRead+s.CacheHits, s.BlocksRead, s.CacheHits, s.FilterFalsePositives)
		}
		// The cache-line filter at 10 bits/key is ~1% false positives;
		// 2.5% would mean the filter or the hash is broken.
		if fpr := float64(s.FilterFalsePositives) / float64(s.FilterProbes); fpr > 0.025 {
			t.Fatalf("false-positive rate %.4f at 10 bits per key", fpr)
		}
		t.Logf("cache=%v: %+v, FPR %.4f", c != nil, s, float64(s.FilterFalsePositives)/float64(s.FilterProbes))
		// Present keys: each costs one block; the filter never says no.
		before := r.Stats()
		for i := 0; i < 1000; i++ {
			k := []byte(fmt.Sprintf("k%06d", 2*i))
			if _, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !found || err != nil {
				t.Fatalf("present %s: found=%v err=%v", k, found, err)
			}
		}
		after := r.Stats()
		if after.FilterNegatives != before.FilterNegatives || after.FilterFalsePositives != before.FilterFalsePositives ||
			after.BlocksRead+after.CacheHits-before.BlocksRead-before.CacheHits != 1000 {
			t.Fatalf("present keys: before %+v after %+v", before, after)
		}
		// MayContainHash counts nothing.
		r.MayContainHash(filter.Hash([]byte("k000001")))
		if r.Stats() != after {
			t.Fatal("MayContainHash changed the read stats")
		}
	}
	// Without a filter every absent in-range key costs a block read and no
	// probe is counted.
	data, _ = buildTable(t, evenKeys(1000), WriterOptions{})
	r := openTable(t, data, nil)
	for i := 0; i < 999; i++ {
		k := []byte(fmt.Sprintf("k%06d", 2*i+1))
		r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
	}
	if s := r.Stats(); s.FilterProbes != 0 || s.BlocksRead != 999 {
		t.Fatalf("no filter: %+v", s)
	}
}

// TestTraceOutcomes pins the read path's steps as Explain prints them.
func TestTraceOutcomes(t *testing.T) {
	es := []entry{
		{base.MakeInternalKey([]byte("apple"), 3, base.KindSet), []byte("red")},
		{base.MakeInternalKey([]byte("banana"), 5, base.KindDelete), nil},
		{base.MakeInternalKey([]byte("banana"), 2, base.KindSet), []byte("yellow")},
		{base.MakeInternalKey([]byte("cherry"), 9, base.KindSet), []byte("dark")},
	}
	data, _ := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10, BlockSize: 1})
	r := openTable(t, data, cache.New(1<<20))
	for _, tc := range []struct {
		key  string
		seq  base.SeqNum
		want string
	}{
		{"aardvark", 9, "key range: out"},
		{"apple", 9, "in range; bloom: maybe; block 0 @0+27 read from file; found #3,SET"},
		{"apple", 9, "in range; bloom: maybe; block 0 @0+27 block cache hit; found #3,SET"},
		{"banana", 9, "in range; bloom: maybe; block 1 @32+25 read from file; tombstone #5,DEL"},
		{"banana", 4, "in range; bloom: maybe; block 2 @62+31 read from file; found #2,SET"},
		{"banana", 1, "in range; bloom: maybe; block 2 @62+31 block cache hit; only newer versions"},
		{"cherry", 8, "in range; bloom: maybe; index: no block; only newer versions"},
		{"b", 9, "in range; bloom: absent"},
	} {
		var l Lookup
		if _, _, _, err := r.Get([]byte(tc.key), filter.Hash([]byte(tc.key)), tc.seq, &l); err != nil {
			t.Fatal(err)
		}
		if got := l.String(); got != tc.want {
			t.Errorf("Get(%s, %d):\n got %s\nwant %s", tc.key, tc.seq, got, tc.want)
		}
	}
}

// TestIterBoundsReadOnlyTheirBlocks: a bounded scan reads the blocks that
// overlap its bounds and no others (the index says where to stop).
func TestIterBoundsReadOnlyTheirBlocks(t *testing.T) {
	data, p := buildTable(t, evenKeys(20000), WriterOptions{})
	r := openTable(t, data, nil)
	perBlock := p.NumEntries / p.NumDataBlocks
	lower, upper := []byte("k010000"), []byte("k010100") // 50 keys: at most 1 + 50/perBlock + 1 blocks
	it := r.NewIter(lower, upper)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	it.SeekGE(base.MakeInternalKey([]byte("k999999"), 1, base.KindSet)) // above upper: no read
	it.SeekLT(base.MakeInternalKey([]byte("k000000"), 1, base.KindSet)) // below lower: no read
	if err := it.Close(); err != nil || n != 50 {
		t.Fatalf("saw %d entries, err %v", n, err)
	}
	maxBlocks := 2 * (50/perBlock + 2) // forward and backward scans
	if s := r.Stats(); s.BlocksRead > maxBlocks {
		t.Fatalf("bounded scans of 50 keys (%d per block) read %d blocks, want <= %d", perBlock, s.BlocksRead, maxBlocks)
	}
}
