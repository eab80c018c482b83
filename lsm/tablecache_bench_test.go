package lsm

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// tableCacheBenchKeys is the size of the DB BenchmarkTableCacheGet reads:
// enough tables (about 60 of 4 MiB) that a table cache of 20 churns on
// every Get, as one of 1,000 does past 1,000 tables (issue 30).
const tableCacheBenchKeys = 2_000_000

// tableCacheBenchDir returns a directory holding tableCacheBenchKeys
// present keys (benchKey(2i), 100-byte values), flushed and compacted. It
// is built once and kept, since the fill takes far longer than the reads
// measured: in $MONBAN_BENCH_DIR, else the system's temporary directory.
// Delete it to rebuild.
func tableCacheBenchDir(b *testing.B) string {
	b.Helper()
	parent := os.Getenv("MONBAN_BENCH_DIR")
	if parent == "" {
		parent = os.TempDir()
	}
	dir := filepath.Join(parent, "monban-tablecache-bench-"+strconv.Itoa(tableCacheBenchKeys))
	done := filepath.Join(dir, "BENCH-COMPLETE")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	d, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Random values, which snappy leaves as they are, so the tables hold
	// 2M entries of 116 bytes as bench/peers' do (zeros would compress to
	// a few tables).
	rng := rand.NewChaCha8([32]byte{3})
	val := make([]byte, 100)
	var k []byte
	var batch Batch
	for i := uint64(0); i < tableCacheBenchKeys; i++ {
		k = benchKey(k, 2*i)
		_, _ = rng.Read(val) // never fails
		batch.Put(k, val)
		if batch.Len() == 100 || i == tableCacheBenchKeys-1 {
			if err := d.Write(&batch); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := d.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkTableCacheGet reads random present keys of a 2M-key DB with a
// table cache of 20 (so most Gets reopen their table), with every table
// open, and with every table open but paged (PinnedMetaLimit -1: index
// partitions and filter pages through the block cache), and reports the process's peak resident memory over the reads
// (VmHWM, reset before them) and the off-heap memory mapped at their end. Run each case in a process of its own with a
// fixed count for comparable peaks, e.g.
//
//	go test -run=^$ -bench=TableCacheGet/open=20 -benchtime=200000x ./lsm
func BenchmarkTableCacheGet(b *testing.B) {
	dir := tableCacheBenchDir(b)
	for _, c := range []struct {
		name  string
		open  int
		limit int64
	}{{"open=20", 20, 0}, {"open=all", 1 << 20, 0}, {"open=all,paged", 1 << 20, -1}} {
		b.Run(c.name, func(b *testing.B) {
			d, err := Open(dir, &Options{MaxOpenFiles: c.open, PinnedMetaLimit: c.limit})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			var k []byte
			leaked := d.Stats().OffHeapLeaked
			resetPeakRSS(b)
			b.ResetTimer()
			for range b.N {
				k = benchKey(k, 2*rng.Uint64N(tableCacheBenchKeys))
				if _, err := d.Get(k); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(procStatusKiB(b, "VmHWM"))/1024, "peak-RSS-MiB")
			s := d.Stats()
			b.ReportMetric(float64(s.Total.Files), "tables")
			b.ReportMetric(float64(s.OffHeapMapped)/(1<<20), "mapped-MiB")
			b.ReportMetric(float64(s.OffHeapLeaked-leaked), "leaked-buffers")
			b.ReportMetric(float64(s.MetaBlocksRead)/float64(b.N), "meta-reads/op")
		})
	}
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux's
// clear_refs "5"), so the peak read afterwards is the reads', not the
// fill's or an earlier case's.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skip("no /proc/self/clear_refs to reset the peak RSS:", err)
	}
}

// procStatusKiB reads one "kB" field of /proc/self/status.
func procStatusKiB(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
