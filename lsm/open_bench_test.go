package lsm

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkOpen opens a DB and serves one Get, and reports Open's time
// (open-ms/op), the time until that first Get is answered (first-get-ms/op,
// from the start of Open) and until the background load of the tables
// has ended (loaded-ms/op). The DB is MONBAN_OPEN_DB if set (a kvbench
// fill, whose present keys are even, 16 bytes zero-padded), else one of
// 200,000 keys written here. Each Open writes a manifest and a WAL, as
// any Open does.
func BenchmarkOpen(b *testing.B) {
	dir := os.Getenv("MONBAN_OPEN_DB")
	if dir == "" {
		dir = b.TempDir()
		d, err := Open(dir, &Options{MemtableSize: 256 << 10, TargetFileSize: 256 << 10})
		if err != nil {
			b.Fatal(err)
		}
		v := make([]byte, 100)
		for i := range 200_000 {
			if err := d.Put(fmt.Appendf(nil, "%016d", 2*((i*7919)%200_000)), v); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
	key := fmt.Appendf(nil, "%016d", 2*12345)
	var open, first, loaded time.Duration
	for b.Loop() {
		start := time.Now()
		d, err := Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(start)
		if _, err := d.Get(key); err != nil {
			b.Fatal(err)
		}
		first += time.Since(start)
		<-d.loaded
		loaded += time.Since(start)
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(open), "open-ms/op")
	b.ReportMetric(ms(first), "first-get-ms/op")
	b.ReportMetric(ms(loaded), "loaded-ms/op")
}
