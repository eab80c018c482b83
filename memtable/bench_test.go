package memtable

import (
	"encoding/binary"
	"fmt"
	"github.com/monbandb/monban/internal/cpuclock"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// Benchmark workload (issue 3): 16-byte keys in random order, 100-byte
// values, a memtable filled to ApproximateSize() >= 64 MiB.
const (
	benchKeyLen   = 16
	benchValueLen = 100
	benchTarget   = 64 << 20
)

// benchKey is key i: two words of a bijective scramble of i, so keys are
// distinct, uniformly spread, and an absent key (i >= n) is just another i.
func benchKey(dst []byte, i uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], scramble(i))
	return binary.BigEndian.AppendUint64(dst, i)
}

// scramble is a bijection of the uint64s that spreads consecutive ones.
func scramble(i uint64) uint64 {
	x := i*0x9e3779b97f4a7c15 + 1
	x ^= x >> 31
	return x * 0xbf58476d1ce4e5b9
}

var (
	benchOnce sync.Once
	benchMem  *Memtable
	benchN    uint64
)

// bench64 returns the shared 64 MiB memtable (built once: ~1 s).
func bench64(b *testing.B) (*Memtable, uint64) {
	benchOnce.Do(func() {
		m := New(Options{ExpectedEntries: 500_000})
		value := make([]byte, benchValueLen)
		var key []byte
		var i uint64
		for ; m.ApproximateSize() < benchTarget; i++ {
			key = benchKey(key, i)
			if err := m.Add(base.SeqNum(i+1), base.KindSet, key, value); err != nil {
				panic(err)
			}
		}
		benchMem, benchN = m, i
	})
	b.ReportMetric(float64(benchN), "entries")
	return benchMem, benchN
}

// cpuClock reports, on b.Loop's exit, this thread's CPU ns per iteration
// as "cpu-ns/op": less noisy than ns/op on a shared machine. Call as
// defer cpuClock(b)().
func cpuClock(b *testing.B) func() {
	runtime.LockOSThread()
	start := cpuclock.Thread()
	return func() {
		b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func BenchmarkAdd(b *testing.B) { benchAdd(b, Options{}, benchKey) }

// BenchmarkAddSharedPrefix is BenchmarkAdd with keys that share their
// first 8 bytes, as a table's or a tenant's keys do: an entry orders them
// on its key bytes 8 to 12 without reading the arena.
func BenchmarkAddSharedPrefix(b *testing.B) { benchAdd(b, Options{}, sharedPrefixKey) }

// sharedPrefixKey is key i of 16 bytes whose first 8 all keys share.
func sharedPrefixKey(dst []byte, i uint64) []byte {
	dst = append(dst[:0], "table042"...)
	return binary.BigEndian.AppendUint64(dst, scramble(i))
}

// BenchmarkGetHitSharedPrefix is BenchmarkGetHit on 500k keys that share
// their first 8 bytes.
func BenchmarkGetHitSharedPrefix(b *testing.B) {
	const n = 500_000
	m := New(Options{ExpectedEntries: n})
	value := make([]byte, benchValueLen)
	for i := range uint64(n) {
		if err := m.Add(base.SeqNum(i+1), base.KindSet, sharedPrefixKey(nil, i), value); err != nil {
			b.Fatal(err)
		}
	}
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = sharedPrefixKey(nil, rand.Uint64N(n))
	}
	defer cpuClock(b)()
	for i := 0; b.Loop(); i++ {
		if _, res := m.Get(keys[i&(1<<16-1)], base.MaxSeqNum); res != Found {
			b.Fatal(res)
		}
	}
}

// BenchmarkAddSplit is BenchmarkAdd with a split in the filter: the
// keys' first 8 bytes, random, so every Add inserts a prefix too (the
// worst case: no two consecutive Adds share one).
func BenchmarkAddSplit(b *testing.B) {
	benchAdd(b, Options{Split: &filter.Split{Name: "first8", Len: func(k []byte) int { return min(len(k), 8) }}}, benchKey)
}

func benchAdd(b *testing.B, opts Options, keyOf func([]byte, uint64) []byte) {
	value := make([]byte, benchValueLen)
	key := make([]byte, 0, benchKeyLen)
	m := New(opts)
	b.SetBytes(benchKeyLen + benchValueLen)
	b.ReportAllocs()
	defer cpuClock(b)()
	for i := 0; b.Loop(); i++ {
		if i%(1<<19) == 0 { // start over at ~64 MiB, as a flush would
			m = New(opts)
		}
		key = keyOf(key, uint64(i))
		if err := m.Add(base.SeqNum(i+1), base.KindSet, key, value); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddSmall is BenchmarkAdd for an engine with a small
// MemtableSize (issue 11): a memtable is replaced once ApproximateSize
// reaches size, as the engine's rotation would, so the cost of starting a
// memtable (first chunk, first filter) is paid per flush, and
// "entries/memtable" shows how many Adds a flush is worth.
func BenchmarkAddSmall(b *testing.B) {
	for _, size := range []int64{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			value := make([]byte, benchValueLen)
			key := make([]byte, 0, benchKeyLen)
			m := New(Options{})
			memtables := 1
			b.SetBytes(benchKeyLen + benchValueLen)
			b.ReportAllocs()
			defer cpuClock(b)()
			for i := 0; b.Loop(); i++ {
				if m.ApproximateSize() >= size {
					m = New(Options{})
					memtables++
				}
				key = benchKey(key, uint64(i))
				if err := m.Add(base.SeqNum(i+1), base.KindSet, key, value); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/float64(memtables), "entries/memtable")
		})
	}
}

func BenchmarkGetHit(b *testing.B) {
	m, n := bench64(b)
	keys := benchKeys(n, 0, 1<<16)
	b.ReportAllocs()
	defer cpuClock(b)()
	for i := 0; b.Loop(); i++ {
		if _, res := m.Get(keys[i&(1<<16-1)], base.MaxSeqNum); res != Found {
			b.Fatal(res)
		}
	}
}

// BenchmarkGetAbsent compares an absent-key Get with the filter (the
// normal path) and without it (Options.DisableFilter, flipped on the same
// memtable so both measure the same tree): the ratio is what the filter
// saves. tree-searches/op counts filter false positives.
func BenchmarkGetAbsent(b *testing.B) {
	m, n := bench64(b)
	keys := benchKeys(n, n, 1<<16) // keys n.. were never added
	for _, tc := range []struct {
		name     string
		noFilter bool
	}{{"filter", false}, {"nofilter", true}} {
		b.Run(tc.name, func(b *testing.B) {
			m.noFilter = tc.noFilter
			defer func() { m.noFilter = false }()
			searches := 0
			b.ReportAllocs()
			defer cpuClock(b)()
			for i := 0; b.Loop(); i++ {
				switch _, res := m.Get(keys[i&(1<<16-1)], base.MaxSeqNum); res {
				case Absent:
					searches++
				case FilteredOut:
				default:
					b.Fatal(res)
				}
			}
			b.ReportMetric(float64(searches)/float64(b.N), "tree-searches/op")
		})
	}
}

// BenchmarkGetAbsentRatio measures the same comparison robustly on a
// shared machine: rounds of 1024 absent-key Gets alternate between the
// filter and no filter, each timed by this thread's CPU clock, so both
// sides see the same machine state. It reports CPU ns per Get for each and
// their ratio (the filter's speedup).
func BenchmarkGetAbsentRatio(b *testing.B) {
	m, n := bench64(b)
	keys := benchKeys(n, n, 1<<16)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() { m.noFilter = false }()
	const round = 1024
	var spent [2]time.Duration
	gets := 0
	for i := 0; b.Loop(); i++ {
		for side, noFilter := range []bool{false, true} {
			m.noFilter = noFilter
			start := cpuclock.Thread()
			for j := range round {
				m.Get(keys[(i*round+j)&(1<<16-1)], base.MaxSeqNum)
			}
			spent[side] += cpuclock.Thread() - start
		}
		gets += round
	}
	with, without := float64(spent[0])/float64(gets), float64(spent[1])/float64(gets)
	b.ReportMetric(with, "filter-cpu-ns/get")
	b.ReportMetric(without, "nofilter-cpu-ns/get")
	b.ReportMetric(without/with, "speedup")
}

// benchKeys returns count keys starting at first, shuffled over [0, n) when
// first == 0 (hits), consecutive otherwise (absent keys).
func benchKeys(n, first uint64, count int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, count)
	for i := range keys {
		j := first + uint64(i)
		if first == 0 {
			j = rng.Uint64N(n)
		}
		keys[i] = benchKey(nil, j)
	}
	return keys
}

func BenchmarkIterNext(b *testing.B) {
	m, _ := bench64(b)
	it := m.NewIter()
	defer it.Close()
	it.First()
	b.ReportAllocs()
	defer cpuClock(b)()
	for b.Loop() {
		if !it.Next() {
			it.First()
		}
	}
}

// BenchmarkLevelRotate measures Rotate and Flushed with filters the size of
// a 64 MiB memtable's (the n entries of bench64, 2^19 slots each), with
// one, two or three immutables already queued: clone + merge (or
// subtract), linear in the filters, paid once per rotation or flush.
func BenchmarkLevelRotate(b *testing.B) {
	_, n := bench64(b)
	mems := make([]*Memtable, 4)
	for j := range mems {
		// Only the filter matters here: real keys, empty values.
		m := New(Options{ExpectedEntries: int(n)})
		var key []byte
		for i := range n {
			key = benchKey(key, uint64(j)*n+i)
			if err := m.AddHash(1, base.KindSet, key, nil, filter.Hash(key)); err != nil {
				b.Fatal(err)
			}
		}
		m.Freeze()
		mems[j] = m
	}
	// level returns a level whose immutables are mems[:q] (oldest first in
	// mems, so newest first reversed) and whose active memtable is mems[q].
	level := func(q int) *Level {
		l := &Level{active: mems[q]}
		for j := range q {
			l.imm = append([]*Memtable{mems[j]}, l.imm...)
			if l.combined == nil {
				l.combined = mems[j].Filter()
				continue
			}
			var err error
			if l.combined, err = mergeGrowing(l.combined, mems[j].Filter()); err != nil {
				b.Fatal(err)
			}
		}
		return l
	}
	// The parts of rotate/queued=1: clone the combined filter, grow it
	// (2 x 355k fingerprints need 2^20 slots at maxLoad), merge.
	f0, f1 := mems[0].Filter(), mems[1].Filter()
	b.Run("part=clone", func(b *testing.B) {
		for b.Loop() {
			f0.Clone()
		}
	})
	b.Run("part=grow", func(b *testing.B) {
		for b.Loop() {
			if err := f0.Clone().Grow(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("part=merge", func(b *testing.B) {
		for b.Loop() {
			c := f0.Clone()
			if err := c.Grow(); err != nil {
				b.Fatal(err)
			}
			if err := c.Merge(f1); err != nil {
				b.Fatal(err)
			}
		}
	})
	for q := 1; q <= 3; q++ {
		l := level(q)
		b.Run(fmt.Sprintf("rotate/queued=%d", q), func(b *testing.B) {
			for b.Loop() {
				// The active memtable is already frozen (Freeze is
				// idempotent), so each iteration does the same merge.
				if _, err := l.Rotate(New(Options{})); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(l.combined.Slots()), "combined-slots")
			b.ReportMetric(float64(n), "fingerprints/memtable")
		})
		if q < 2 {
			continue // with one immutable, Flushed is O(1)
		}
		b.Run(fmt.Sprintf("flushed/queued=%d", q), func(b *testing.B) {
			for b.Loop() {
				if _, err := l.Flushed(mems[0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(l.combined.Slots()), "combined-slots")
		})
	}
}

// BenchmarkFilterLoad backs maxLoad: the cost of a memtable filter probe
// (absent key) and of an insert (Insert then Delete, so the load stays
// put) at increasing load, 2^16 slots of FingerprintBits-wide
// fingerprints.
func BenchmarkFilterLoad(b *testing.B) {
	const q = 16
	for _, load := range []float64{0.5, 0.75, 0.85, 0.9, 0.95} {
		f, err := filter.NewQuotient(q, FingerprintBits-q)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range int(load * (1 << q)) {
			if err := f.InsertHash(rng.Uint64()); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("load=%.2f/contains", load), func(b *testing.B) {
			for b.Loop() {
				f.MayContainHash(rng.Uint64())
			}
		})
		b.Run(fmt.Sprintf("load=%.2f/insert+delete", load), func(b *testing.B) {
			for b.Loop() {
				h := rng.Uint64()
				if err := f.InsertHash(h); err != nil {
					b.Fatal(err)
				}
				f.DeleteHash(h)
			}
		})
	}
}
