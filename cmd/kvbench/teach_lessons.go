package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// teacher runs the lesson's operations; the first error sticks and ends
// the lesson.
type teacher struct {
	db  *lsm.DB
	err error
}

func key(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }

func (t *teacher) check(err error) {
	if t.err == nil && err != nil {
		t.err = err
	}
}

func (t *teacher) put(i int, v string) { t.check(t.db.Put(key(i), []byte(v))) }

func (t *teacher) explain(k string) string {
	tr, err := t.db.Explain([]byte(k))
	t.check(err)
	return tr.String()
}

// tree lists the mutable level (name, keys, entries: as the lesson built
// it, since the DB does not list memtables) and every table with its key
// range and counts.
func (t *teacher) tree(memtables [][3]string) string { return t.treeOf(memtables, quoted) }

// treeOf is tree with the keys written by name.
func (t *teacher) treeOf(memtables [][3]string, name func([]byte) string) string {
	var b strings.Builder
	b.WriteString("source                      keys        entries  tombstones\n")
	for _, m := range memtables {
		fmt.Fprintf(&b, "%-27s %-10s  %7s  %10d\n", m[0], m[1], m[2], 0)
	}
	tables, err := t.db.Tables()
	t.check(err)
	for _, tab := range tables {
		fmt.Fprintf(&b, "%-27s %-10s  %7d  %10d\n", fmt.Sprintf("L%d %06d.sst", tab.Level, tab.FileNum),
			fmt.Sprintf("%s..%s", name(tab.Smallest), name(tab.Largest)), tab.Entries, tab.Tombstones)
	}
	return b.String()
}

// quoted is k as Go would quote it, without the quotes: a range
// tombstone cut at an output table's bound ends a table's key range at a
// key such as "r075\x00".
func quoted(k []byte) string {
	q := strconv.Quote(string(k))
	return q[1 : len(q)-1]
}

// firstFalsePositive asks the odd keys that no source holds, k001 first,
// and returns the first that some filter admits although its source holds
// no version (a data block, or a memtable's tree, searched for nothing),
// how many keys it asked, and that key's trace.
func (t *teacher) firstFalsePositive() (string, int, string) {
	asked := 0
	for i := 1; i < 1000; i += 2 {
		if i%10 == 5 {
			continue // L0 holds k##5
		}
		asked++
		k := string(key(i))
		tr, err := t.db.Explain([]byte(k))
		t.check(err)
		for _, s := range tr.Steps {
			if s.Verdict == lsm.VerdictMaybe && s.Outcome == lsm.OutcomeNoVersion {
				return k, asked, tr.String()
			}
		}
	}
	return "", asked, ""
}

// deletes shows the absent-key proof on the write path: a delete of a key
// no filter admits writes nothing; one of a key some filter admits is a
// tombstone in the WAL and the memtable.
func (t *teacher) deletes() string {
	var b strings.Builder
	b.WriteString("                DeletesElided  WAL bytes        table filters probed\n")
	for _, k := range []string{"k301", "k302"} {
		before := t.db.Stats()
		t.check(t.db.Delete([]byte(k)))
		after := t.db.Stats()
		fmt.Fprintf(&b, "%-15s %-14s %-16s %d\n", fmt.Sprintf("Delete(%q)", k),
			fmt.Sprintf("%d -> %d", before.DeletesElided, after.DeletesElided),
			fmt.Sprintf("%d -> %d", before.WALBytes, after.WALBytes),
			after.DeleteProofProbes-before.DeleteProofProbes)
	}
	return b.String()
}

// annihilate writes a put and a delete of a new key into the empty active
// memtable (the delete is a tombstone: nothing in a memtable is removed
// before its flush), then flushes: the flush drops both.
func (t *teacher) annihilate(flushes func() []lsm.FlushInfo) string {
	var b strings.Builder
	t.check(t.db.Put([]byte("k303"), []byte("x")))
	t.check(t.db.Delete([]byte("k303")))
	b.WriteString(t.explain("k303"))
	before, n := t.db.Stats(), len(flushes())
	t.check(t.db.Flush())
	after, fs := t.db.Stats(), flushes()
	var drops [len(after.FlushDrops)]uint64
	for i := range drops {
		drops[i] = after.FlushDrops[i] - before.FlushDrops[i]
	}
	tables, err := t.db.Tables()
	t.check(err)
	for _, fi := range fs[n:] {
		fmt.Fprintf(&b, "Flush: %s in\n", plural(fi.Entries, "entry", "entries"))
		fmt.Fprintf(&b, "  dropped: %d shadowed, %d tombstones at the bottom, %d by filter proof\n", drops[0], drops[1], drops[2])
		if len(fi.Output) == 0 {
			b.WriteString("  written: no table\n")
		}
		for _, o := range fi.Output {
			for _, tab := range tables {
				if tab.FileNum == o.FileNum {
					fmt.Fprintf(&b, "  written: L%d %06d.sst, %s..%s, %s, %s\n", tab.Level, o.FileNum, tab.Smallest, tab.Largest,
						plural(int(tab.Entries), "entry", "entries"), plural(int(tab.Tombstones), "tombstone", "tombstones"))
				}
			}
		}
	}
	return b.String()
}

// rangeDelete deletes k400…k499 with one range tombstone, [k400, k500),
// into the empty active memtable, then puts k450 again: Gets of k440
// (whose versions are in L0 and L6) and of k450 meet the tombstone first;
// after a Flush, so does a Get of k442 (in L6), in the tombstone's L0
// table.
func (t *teacher) rangeDelete() string {
	t.check(t.db.DeleteRange([]byte("k400"), []byte("k500")))
	t.put(450, "v7")
	s := t.explain("k440") + t.explain("k450")
	t.check(t.db.Flush())
	return s + "after a Flush, which writes the tombstone and k450 to L0:\n" + t.explain("k442")
}

// rangeCompact shows what merges do with a range tombstone, on a DB of
// its own in dir (the lesson DB stays as the read-path chapter leaves it):
// r000…r199 compacted into the last level, a snapshot taken, r050…r149
// deleted by one range tombstone, and the range compacted. The snapshot
// still reads the covered versions, so the compaction keeps them and the
// tombstone, cut at each output table's bounds; once the snapshot is
// released, elision-only rewrites drop them and the tombstone, at the
// bottom, one table at a time (MaxConcurrentCompactions 1), so that the
// tables' numbers are the same at every run.
func rangeCompact(dir string) (string, error) {
	o := teachOptions(nil)
	o.TargetFileSize, o.Compression, o.MaxConcurrentCompactions = 4<<10, lsm.NoCompression, 1
	db, err := lsm.Open(dir, o)
	if err != nil {
		return "", err
	}
	t := &teacher{db: db}
	var b strings.Builder
	for i := range 200 {
		t.check(db.Put(fmt.Appendf(nil, "r%03d", i), []byte(strings.Repeat("v", 40))))
	}
	t.check(db.Compact())
	snap := db.NewSnapshot()
	t.check(db.DeleteRange([]byte("r050"), []byte("r150")))
	t.check(db.CompactRange([]byte("r050"), []byte("r150")))
	b.WriteString("with a snapshot older than the tombstone:\n")
	b.WriteString(t.tree(nil))
	b.WriteString(t.explain("r100"))
	v, err := snap.Get([]byte("r100"))
	t.check(err)
	fmt.Fprintf(&b, "the snapshot's Get(\"r100\"): %d bytes\n", len(v))
	before := db.Stats()
	t.check(snap.Close())
	// Its Close asks the picker again, which starts the first rewrite
	// before Close returns; each rewrite's end starts the next, one at a
	// time, until none is left.
	for db.Stats().CompactionsRunning > 0 {
		time.Sleep(time.Millisecond)
	}
	after := db.Stats()
	fmt.Fprintf(&b, "the snapshot released: %d tables rewritten, %d versions dropped as shadowed\n",
		after.Compactions.Rewrite-before.Compactions.Rewrite, after.CompactionDrops[0]-before.CompactionDrops[0])
	b.WriteString(t.tree(nil))
	b.WriteString(t.explain("r100"))
	return b.String(), errors.Join(t.err, db.Close())
}

// fprLesson is the filter arithmetic of docs/read-path.md, "What a
// filter's bits buy": the standard Bloom filter's false-positive rate at
// its best k, the cache-line filter's at the k it uses; how the standard
// rate moves with k at 10 bits per key; why crowded lines cost the
// cache-line layout more than sparse ones give back; and the quotient
// filters of the memtables.
func fprLesson() string {
	var b strings.Builder
	b.WriteString("bits/key   standard: k  FPR       cache-line: k  FPR       ratio\n")
	for _, bits := range []int{4, 6, 8, 10, 11, 12, 16, 20} {
		ks, kc := filter.StandardHashes(float64(bits)), filter.CacheLineProbes(bits)
		std, cl := filter.StandardFPR(float64(bits), ks), filter.CacheLineFPR(float64(bits), kc)
		fmt.Fprintf(&b, "%8d   %11d  %-8s  %13d  %-8s  %.2f\n", bits, ks, rate(std), kc, rate(cl), cl/std)
	}
	fmt.Fprintf(&b, "\nstandard, 10 bits/key, by k (b·ln 2 = %.2f):\n", 10*math.Ln2)
	for k := 1; k <= 10; k++ {
		fmt.Fprintf(&b, "  k=%-2d %s\n", k, rate(filter.StandardFPR(10, k)))
	}
	// A line holding j keys is a 512-bit standard filter at 512/j bits per
	// key; j is Poisson with mean λ = 51.2 at 10 bits per key.
	const lambda = 512.0 / 10
	sd := math.Sqrt(lambda)
	lo, hi := int(math.Round(lambda-sd)), int(math.Round(lambda+sd))
	at := func(j int) float64 { return filter.StandardFPR(512/float64(j), filter.CacheLineProbes(10)) }
	fmt.Fprintf(&b, "\ncache-line, 10 bits/key, k=%d: keys per line Poisson, mean %.1f, sd %.1f\n", filter.CacheLineProbes(10), lambda, sd)
	mid := int(math.Round(lambda))
	fmt.Fprintf(&b, "  FPR of a line of %d keys %s, of %d keys %s, of %d keys %s\n", lo, rate(at(lo)), mid, rate(at(mid)), hi, rate(at(hi)))
	fmt.Fprintf(&b, "  mean of the %d- and %d-key lines: %s, above the %d-key line's\n", lo, hi, rate((at(lo)+at(hi))/2), mid)
	fmt.Fprintf(&b, "\nquotient filter, %d-bit fingerprints: FPR = 1-(1-2^-%d)^n\n", memtableFingerprintBits, memtableFingerprintBits)
	for _, n := range []int{50, 355000, 1 << 20} {
		fmt.Fprintf(&b, "  n=%-8d %.2g\n", n, filter.QuotientTheoryFPR(n, memtableFingerprintBits))
	}
	return b.String()
}

// memtableFingerprintBits is memtable.FingerprintBits, the width of every
// memtable filter (kvbench imports lsm's API, not memtable; a test checks
// the two agree).
const memtableFingerprintBits = 40

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// rate prints a rate as a percentage with three significant figures.
func rate(p float64) string {
	switch {
	case p >= 0.1:
		return fmt.Sprintf("%.1f%%", 100*p)
	case p >= 0.01:
		return fmt.Sprintf("%.2f%%", 100*p)
	case p >= 0.001:
		return fmt.Sprintf("%.3f%%", 100*p)
	}
	return fmt.Sprintf("%.4f%%", 100*p)
}

// prefixLesson shows an iterator bounded to a prefix, on a DB of its own
// in dir whose Split cuts keys after 3 bytes: users u00, u02, … u98, four
// keys each (u00a … u00d), compacted into the last level, and u10e and
// u90e flushed to L0 above them. With no block cache, every data block an
// iterator touches is a read of its table's file, counted per table
// (tableReads; the indexes and filters were read when the tables opened).
// An absent prefix, u51, is asked of the memtable and of the two tables
// whose ranges hold it, and every filter says no: no block is read. The
// same keys as a range, [u51, u52), read a block in both tables, as no
// filter answers a range. A present prefix, u50, reads its block in L6
// and none in L0, whose filter rules u50 out.
func prefixLesson(dir string) (string, error) {
	db, files, err := openCounted(dir, 4<<10, func(o *lsm.Options) {
		o.Split = &filter.Split{Name: "teach.first3", Len: func(k []byte) int { return min(len(k), 3) }}
	})
	if err != nil {
		return "", err
	}
	t := &teacher{db: db}
	for u := 0; u < 100; u += 2 {
		for _, k := range "abcd" {
			t.check(db.Put(fmt.Appendf(nil, "u%02d%c", u, k), []byte(strings.Repeat("v", 40))))
		}
	}
	t.check(db.Compact())
	t.check(db.Put([]byte("u10e"), []byte("v")))
	t.check(db.Put([]byte("u90e"), []byte("v")))
	t.check(db.Flush())
	var b strings.Builder
	b.WriteString(t.tree(nil))
	filters := func(before, after lsm.Stats) string {
		return fmt.Sprintf("filters asked %d, ruled the prefix out %d (Stats.PrefixProbes, PrefixSkips)",
			after.PrefixProbes-before.PrefixProbes, after.PrefixSkips-before.PrefixSkips)
	}
	for _, it := range []struct {
		what string
		opts lsm.IterOptions
	}{
		{`Prefix "u51"`, lsm.IterOptions{Prefix: []byte("u51")}},
		{`LowerBound "u51", UpperBound "u52"`, lsm.IterOptions{LowerBound: []byte("u51"), UpperBound: []byte("u52")}},
		{`Prefix "u50"`, lsm.IterOptions{Prefix: []byte("u50")}},
	} {
		t.scanTrace(&b, files, it.what, it.opts, filters, func(k []byte) string { return string(k) }, []byte("u50"), []byte("u52"))
	}
	return b.String(), errors.Join(t.err, db.Close())
}

// openCounted opens an iterator lesson's DB in dir: tables of targetFile
// bytes, uncompressed, no block cache, so every data block an iterator
// touches is a read of its table's file, counted per table by files (the
// indexes and filters are read when the tables open); set adds the
// lesson's filter options.
func openCounted(dir string, targetFile int64, set func(o *lsm.Options)) (db *lsm.DB, files *tableReads, err error) {
	o := teachOptions(nil)
	o.TargetFileSize, o.Compression, o.BlockCacheSize = targetFile, lsm.NoCompression, -1
	set(o)
	files = &tableReads{FS: vfs.Default}
	o.FS = files
	db, err = lsm.Open(dir, o)
	return db, files, err
}

// scanTrace runs an iterator with opts to its end and writes, under what,
// the keys it returned (as name writes them; the first and last of more
// than four), what the filters did (filters, from the Stats before and
// after), and the data blocks it read from each table, counted by files:
// every table it read, and every table whose key range meets [lo, hi),
// read or not.
func (t *teacher) scanTrace(b *strings.Builder, files *tableReads, what string, opts lsm.IterOptions,
	filters func(before, after lsm.Stats) string, name func([]byte) string, lo, hi []byte) {
	tables, err := t.db.Tables()
	t.check(err)
	before := make([]uint64, len(tables))
	for i, tab := range tables {
		before[i] = files.fileReads(fmt.Sprintf("%06d.sst", tab.FileNum))
	}
	s := t.db.Stats()
	iter := t.db.NewIter(&opts)
	var keys []string
	for ok := iter.First(); ok; ok = iter.Next() {
		keys = append(keys, name(iter.Key()))
	}
	t.check(errors.Join(iter.Err(), iter.Close()))
	shown := keys
	if len(keys) > 4 {
		shown = []string{keys[0], "…", keys[len(keys)-1]}
	}
	fmt.Fprintf(b, "\niterator, %s: %s\n", what, strings.Join(append([]string{plural(len(keys), "key", "keys")}, shown...), " "))
	fmt.Fprintf(b, "  %s\n", filters(s, t.db.Stats()))
	for i, tab := range tables {
		if n := files.fileReads(fmt.Sprintf("%06d.sst", tab.FileNum)) - before[i]; n > 0 || bytes.Compare(tab.Smallest, hi) < 0 && bytes.Compare(tab.Largest, lo) >= 0 {
			fmt.Fprintf(b, "  L%d %06d.sst: %s\n", tab.Level, tab.FileNum, plural(int(n), "data block read", "data blocks read"))
		}
	}
}
