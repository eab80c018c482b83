package lsm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestExplainAgreesWithGetAndStats: for keys present, deleted and absent,
// in memtables and in several levels, Explain's result matches Get's, and
// its steps match what Stats counted for it.
func TestExplainAgreesWithGetAndStats(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 8 << 10, TargetFileSize: 8 << 10, BlockCacheSize: 16 << 10})
	defer d.Close()
	for i := range 600 {
		d.Put(fmt.Appendf(nil, "k%04d", 2*i), []byte("value"))
		if i%5 == 0 {
			d.Delete(fmt.Appendf(nil, "k%04d", 2*(i/2)))
		}
	}
	d.Flush()
	for i := range 50 {
		d.Put(fmt.Appendf(nil, "k%04d", 4*i), []byte("newer"))
	}
	count := func(tr Trace, s string) uint64 {
		n := 0
		for _, step := range tr.Steps {
			n += strings.Count(step, s)
		}
		return uint64(n)
	}
	for i := range 1300 {
		key := fmt.Appendf(nil, "k%04d", i)
		v, getErr := d.Get(key)
		before := d.Stats()
		tr, err := d.Explain(key)
		after := d.Stats()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case getErr == nil && tr.Result != "found",
			errors.Is(getErr, ErrNotFound) && !strings.HasPrefix(tr.Result, "not found"):
			t.Fatalf("%s: Get says %q, %v; Explain says %q", key, v, getErr, tr.Result)
		}
		checks := []struct {
			what      string
			got, want uint64
		}{
			{"table filter negatives", count(tr, "filter: absent (read avoided)"), after.Total.FilterNegatives - before.Total.FilterNegatives},
			{"blocks read from file", count(tr, "read from file"), after.Total.BlocksRead - before.Total.BlocksRead},
			{"block cache hits", count(tr, "block cache hit"), after.Total.CacheHits - before.Total.CacheHits},
			{"memtable filter negatives", count(tr, "quotient filter: absent"), after.MemtableFilterNegatives - before.MemtableFilterNegatives},
			{"combined filter negatives", count(tr, "combined filter: absent"), after.ImmutableFilterNegatives - before.ImmutableFilterNegatives},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Fatalf("%s: the trace shows %d %s, Stats counted %d\n%s", key, c.got, c.what, c.want, tr)
			}
		}
	}
}
