package raft

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftwal "github.com/hashicorp/raft-wal"
)

// logStore is what the benchmarks drive: a raft.LogStore that closes.
type logStore interface {
	hraft.LogStore
	io.Closer
}

// benchStores opens each store the benchmarks compare in a directory of
// its own, every one of them syncing each StoreLogs: monban's Store
// always; raft-boltdb by default (bbolt syncs each commit); raft-wal by
// default.
var benchStores = []struct {
	name string
	open func(dir string) (logStore, error)
}{
	{"monban", func(dir string) (logStore, error) { return Open(dir, nil) }},
	{"boltdb", func(dir string) (logStore, error) { return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db")) }},
	{"wal", func(dir string) (logStore, error) { return raftwal.Open(dir) }},
}

func openBenchStore(b *testing.B, open func(string) (logStore, error)) logStore {
	s, err := open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// storeLogs appends logs times times, renumbered from *next on.
func storeLogs(b *testing.B, s logStore, logs []*hraft.Log, next *uint64, times int) {
	for range times {
		for _, l := range logs {
			l.Index = *next
			*next++
		}
		if err := s.StoreLogs(logs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLogs(n, valueSize int) []*hraft.Log {
	logs := make([]*hraft.Log, n)
	for i := range logs {
		value := make([]byte, valueSize)
		for j := range value {
			value[j] = byte(rand.Uint32()) // random, each its own: nothing compresses
		}
		logs[i] = &hraft.Log{Term: 1, Type: hraft.LogCommand, Data: value, AppendedAt: time.Now()}
	}
	return logs
}

// BenchmarkStoreLogs appends batches of entries as raft does, one
// StoreLogs per batch, each durable when it returns.
func BenchmarkStoreLogs(b *testing.B) {
	for _, st := range benchStores {
		for _, batch := range []int{1, 16, 64} {
			for _, size := range []int{128, 1024} {
				b.Run(fmt.Sprintf("%s/batch=%d/value=%d", st.name, batch, size), func(b *testing.B) {
					s := openBenchStore(b, st.open)
					logs := benchLogs(batch, size)
					next := uint64(1)
					b.SetBytes(int64(batch * size))
					b.ResetTimer()
					storeLogs(b, s, logs, &next, b.N)
					b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "entries/s")
				})
			}
		}
	}
}

// BenchmarkGetLog reads entries at random from a log of 10,000 entries of
// 128 bytes, stored 100 to a StoreLogs.
func BenchmarkGetLog(b *testing.B) {
	benchGetLog(b, func(n int) uint64 { return 1 + rand.Uint64N(getLogEntries) })
}

// BenchmarkGetLogInOrder is BenchmarkGetLog reading the entries in order,
// as a follower applying them and a leader replicating them read.
func BenchmarkGetLogInOrder(b *testing.B) {
	benchGetLog(b, func(n int) uint64 { return 1 + uint64(n)%getLogEntries })
}

const getLogEntries = 10000

func benchGetLog(b *testing.B, index func(n int) uint64) {
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			s := openBenchStore(b, st.open)
			logs := benchLogs(getLogEntries, 128)
			for i, l := range logs {
				l.Index = uint64(i + 1)
			}
			for i := 0; i < getLogEntries; i += 100 {
				if err := s.StoreLogs(logs[i : i+100]); err != nil {
					b.Fatal(err)
				}
			}
			var l hraft.Log
			b.ResetTimer()
			for n := range b.N {
				if err := s.GetLog(index(n), &l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetLogReopened is BenchmarkGetLog/monban on a Store closed and
// opened again after its fill: it knows none of the runs, and reads each
// through an iterator's seek rather than a point read of its key.
func BenchmarkGetLogReopened(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	logs := benchLogs(n, 128)
	for i, l := range logs {
		l.Index = uint64(i + 1)
	}
	for i := 0; i < n; i += 100 {
		if err := s.StoreLogs(logs[i : i+100]); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = Open(dir, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var l hraft.Log
	b.ResetTimer()
	for range b.N {
		if err := s.GetLog(1+rand.Uint64N(n), &l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendAfterTruncate is BenchmarkStoreLogs at batch 16, 128 B,
// on a log that held 10⁶ entries of which all but the last 1,000 were
// deleted, as raft's compaction after a snapshot deletes them: what a
// long-lived log's appends cost, against a fresh log's. The fresh log is
// a second store of the same kind, opened beside it, and the two take
// turns (takeTurns): measured one after the other, the first would pay
// for the writeback of what the fill left dirty in the page cache and the
// second would not, and the ratio would measure the disk, not the log.
// x-fresh is the truncated log's rate over the fresh one's.
func BenchmarkAppendAfterTruncate(b *testing.B) {
	const total, kept, batch = 1_000_000, 1000, 16
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			stores := []logStore{openBenchStore(b, st.open), openBenchStore(b, st.open)}
			truncated := stores[1]
			next := []uint64{1, 1}
			fill := benchLogs(1000, 128)
			storeLogs(b, truncated, fill, &next[1], total/len(fill))
			if err := truncated.DeleteRange(1, total-kept); err != nil {
				b.Fatal(err)
			}
			logs := [][]*hraft.Log{benchLogs(batch, 128), benchLogs(batch, 128)}
			b.ResetTimer()
			spent := takeTurns(b, stores, logs, next)
			fresh, after := float64(b.N*batch)/spent[0].Seconds(), float64(b.N*batch)/spent[1].Seconds()
			b.ReportMetric(after, "entries/s")
			b.ReportMetric(fresh, "fresh-entries/s")
			b.ReportMetric(after/fresh, "x-fresh")
		})
	}
}

// BenchmarkStoreLogsInterleaved is BenchmarkStoreLogs with the three
// stores taking turns: each iteration makes one StoreLogs on each, in
// every order in turn (takeTurns), and times each call alone. On a shared machine an
// fsync's latency swings by 3× from one second to the next, so stores
// measured one after the other, as BenchmarkStoreLogs measures them, are
// compared across different disks; taking turns, every store meets the
// same load. It reports each store's entries per second and monban's
// ratios to the others, the figures the README's table quotes.
func BenchmarkStoreLogsInterleaved(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		for _, size := range []int{128, 1024} {
			b.Run(fmt.Sprintf("batch=%d/value=%d", batch, size), func(b *testing.B) {
				stores := make([]logStore, len(benchStores))
				logs := make([][]*hraft.Log, len(benchStores))
				next := make([]uint64, len(benchStores))
				for i, st := range benchStores {
					stores[i] = openBenchStore(b, st.open)
					logs[i] = benchLogs(batch, size)
					next[i] = 1
				}
				b.SetBytes(int64(len(stores) * batch * size))
				b.ResetTimer()
				spent := takeTurns(b, stores, logs, next)
				rate := make(map[string]float64, len(stores))
				for i, st := range benchStores {
					rate[st.name] = float64(b.N*batch) / spent[i].Seconds()
					b.ReportMetric(rate[st.name], st.name+"-entries/s")
				}
				b.ReportMetric(rate["monban"]/rate["boltdb"], "x-boltdb")
				b.ReportMetric(rate["monban"]/rate["wal"], "x-wal")
			})
		}
	}
}

// takeTurns makes b.N rounds of one StoreLogs on each store, of logs[i]
// renumbered from next[i] on, and returns the time each store spent in its
// calls. The rounds go through every order of the stores in turn, not one
// order rotated: rotating keeps each store's predecessor (with three
// stores, the one after raft-boltdb's two fdatasyncs would always be the
// same store), and what the call before left to the disk is part of what a
// call costs.
func takeTurns(b *testing.B, stores []logStore, logs [][]*hraft.Log, next []uint64) []time.Duration {
	orders := permutations(len(stores))
	spent := make([]time.Duration, len(stores))
	for n := range b.N {
		for _, i := range orders[n%len(orders)] {
			start := time.Now()
			storeLogs(b, stores[i], logs[i], &next[i], 1)
			spent[i] += time.Since(start)
		}
	}
	return spent
}

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(n - 1) {
		for at := 0; at <= len(p); at++ {
			q := append(append(append(make([]int, 0, n), p[:at]...), n-1), p[at:]...)
			all = append(all, q)
		}
	}
	return all
}

// TestPermutations checks the orders takeTurns goes through: n! of them,
// each holding every store once, no two alike, so that each store follows
// each other store in as many rounds.
func TestPermutations(t *testing.T) {
	for n := 1; n <= 4; n++ {
		orders := permutations(n)
		want := 1
		for i := 2; i <= n; i++ {
			want *= i
		}
		if len(orders) != want {
			t.Fatalf("n=%d: %d orders, want %d", n, len(orders), want)
		}
		seen := map[string]bool{}
		for _, o := range orders {
			sorted := slices.Sorted(slices.Values(o))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("n=%d: order %v is not a permutation", n, o)
				}
			}
			key := fmt.Sprint(o)
			if seen[key] {
				t.Fatalf("n=%d: order %v twice", n, o)
			}
			seen[key] = true
		}
	}
}
