package lsm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestPinnedMetaLimit: with no room to pin, every table reads its index
// and filter paged through the block cache (or, without one, from the
// file at every use: the limit holds all the same), and Get, MultiGet,
// Delete and iterators give the answers a pinned DB gives; with room for
// everything, nothing is paged. Stats say which.
func TestPinnedMetaLimit(t *testing.T) {
	for _, c := range []struct {
		name      string
		limit     int64
		cache     int64
		wantPaged bool
	}{{"none-pinned", -1, 64 << 10, true}, {"none-pinned-no-cache", -1, -1, true},
		{"all-pinned", 0, 64 << 10, false}, {"room-for-all", 1 << 30, 64 << 10, false}} {
		t.Run(c.name, func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 16 << 10, BlockSize: 256, TargetFileSize: 8 << 10,
				BlockCacheSize: c.cache, PinnedMetaLimit: c.limit})
			defer d.Close()
			model := putEvenKeys(t, d, 3000)
			for i := 0; i < 3000; i += 7 {
				k := fmt.Sprintf("k%05d", 2*i)
				if err := d.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			}
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
			var keys [][]byte
			for i := range 6000 {
				k := fmt.Sprintf("k%05d", i)
				keys = append(keys, []byte(k))
				mustGet(t, d, k, model[k])
			}
			vals, errs := d.MultiGet(keys)
			for i, k := range keys {
				want, ok := model[string(k)]
				if ok != (errs[i] == nil) || ok && string(vals[i]) != want || !ok && !errors.Is(errs[i], ErrNotFound) {
					t.Fatalf("MultiGet(%s) = %q, %v; want %q", k, vals[i], errs[i], want)
				}
			}
			n := 0
			it := d.NewIter(nil)
			for k, v := range it.All() {
				if model[string(k)] != string(v) {
					t.Fatalf("scan: %s=%s, model has %q", k, v, model[string(k)])
				}
				n++
			}
			if err := it.Close(); err != nil || n != len(model) {
				t.Fatalf("scan: %d entries of %d, %v", n, len(model), err)
			}
			s := d.Stats()
			if (s.MetaPagedTables > 0) != c.wantPaged || c.wantPaged && (s.MetaPinnedBytes != 0 || s.MetaBlocksRead == 0) ||
				!c.wantPaged && (s.MetaPinnedBytes == 0 || s.MetaBlocksRead != 0) {
				t.Fatalf("%d paged tables, %d bytes pinned, %d meta blocks read", s.MetaPagedTables, s.MetaPinnedBytes, s.MetaBlocksRead)
			}
		})
	}
}

// TestLastLevelPinsItsIndexFirst: with room for every index but not every
// filter, last-level tables pin their index alone and page their filter
// (Stats.MetaPagedFilterTables), and reads still give the model's answers.
func TestLastLevelPinsItsIndexFirst(t *testing.T) {
	fs := vfs.NewMem()
	opts := &Options{FS: fs, MemtableSize: 16 << 10, BlockSize: 256, TargetFileSize: 8 << 10, BlockCacheSize: 64 << 10,
		PinnedMetaLimit: NoPinnedMetaLimit}
	d := openMem(t, fs, opts)
	model := putEvenKeys(t, d, 3000)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := range 6000 {
		k := fmt.Sprintf("k%05d", i)
		mustGet(t, d, k, model[k])
	}
	s := d.Stats()
	all, filters := s.MetaPinnedBytes, int64(s.Total.FilterBytes)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if filters == 0 || filters >= all {
		t.Fatalf("%d bytes pinned, %d of them filters", all, filters)
	}

	opts.PinnedMetaLimit = all - filters/2
	d = openMem(t, fs, opts)
	defer d.Close()
	for i := range 6000 {
		k := fmt.Sprintf("k%05d", i)
		mustGet(t, d, k, model[k])
	}
	s = d.Stats()
	if s.MetaPagedFilterTables == 0 || s.MetaBlocksRead == 0 || s.MetaPinnedBytes > opts.PinnedMetaLimit {
		t.Fatalf("limit %d: %d tables page their filter alone, %d both; %d bytes pinned, %d meta blocks read",
			opts.PinnedMetaLimit, s.MetaPagedFilterTables, s.MetaPagedTables, s.MetaPinnedBytes, s.MetaBlocksRead)
	}
}

// putEvenKeys puts n keys, k00000, k00002, ..., so that the odd keys
// between them are absent, and returns what it put.
func putEvenKeys(t *testing.T, d *DB, n int) map[string]string {
	t.Helper()
	model := map[string]string{}
	for i := range n {
		k, v := fmt.Sprintf("k%05d", 2*i), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	return model
}

// TestCompactionOutputsPinAsLastLevel: a compaction's outputs are opened
// before the edit that adds them is applied (loadTables), so the current
// version does not hold them yet; those bound for the last level must
// still count as the last level's, pinning every index before any filter.
// Counted as upper tables, the first opened pinned both and the rest
// paged both, until a reopen sorted them out.
func TestCompactionOutputsPinAsLastLevel(t *testing.T) {
	opts := &Options{MemtableSize: 16 << 10, BlockSize: 256, TargetFileSize: 8 << 10, BlockCacheSize: 64 << 10,
		PinnedMetaLimit: NoPinnedMetaLimit}
	measure := openMem(t, vfs.NewMem(), opts)
	putEvenKeys(t, measure, 3000)
	if err := measure.Compact(); err != nil {
		t.Fatal(err)
	}
	s := measure.Stats()
	all, filters := s.MetaPinnedBytes, int64(s.Total.FilterBytes)
	if err := measure.Close(); err != nil {
		t.Fatal(err)
	}

	// Room for every index and seven eighths of the filters: the
	// compaction's inputs hold their bytes a little past their eviction
	// (an older version, the compaction's own readers), so a limit this
	// side of an eighth of the filters would test that timing too.
	opts.PinnedMetaLimit = all - filters/8
	d := openMem(t, vfs.NewMem(), opts)
	defer d.Close()
	putEvenKeys(t, d, 3000)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	s = d.Stats()
	if s.MetaPagedFilterTables == 0 || s.MetaPagedTables != 0 || s.MetaPinnedBytes > opts.PinnedMetaLimit {
		t.Fatalf("limit %d: %d tables page their filter alone, %d both; %d bytes pinned",
			opts.PinnedMetaLimit, s.MetaPagedFilterTables, s.MetaPagedTables, s.MetaPinnedBytes)
	}
}
