package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// kvbench teach builds the small DB of docs/read-path.md, always the same
// way, and prints the chapter's traces and figures. Each section is one
// fenced block of the docs, which the tests of this package compare with
// it byte for byte (TestTeachMatchesDocs), so the chapter shows what the
// code does.
//
// Everything runs in one process: an immutable memtable does not survive a
// reopen (its WAL is replayed into the active memtable), so the traces
// through one are taken while a flush is held at its start by an
// lsm.EventListener. Output is deterministic: fixed keys and values, a
// memtable too big to rotate by itself, L0 kept under its compaction
// threshold, Flush and Compact waited for, so every file number and block
// offset is the same on every run.

const teachUsage = "teach -db DIR [SECTION...]"

// A lesson is one section of teach's output.
type lesson struct {
	name, title string
	body        string
}

// runTeach is the teach subcommand: build the lesson DB in a new -db
// directory and print the sections asked for (all by default).
func runTeach(args []string, stdout, stderr io.Writer) error {
	dir, rest, err := subFlags("teach", teachUsage, args, stderr)
	if err != nil {
		return err
	}
	lessons, err := teach(dir)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, l := range lessons {
		known[l.name] = true
	}
	for _, name := range rest {
		if !known[name] {
			return badUsage(stderr, teachUsage, "teach: no section %q (want one of %s)", name, strings.Join(lessonNames(lessons), ", "))
		}
	}
	for _, l := range lessons {
		if len(rest) == 0 || slices.Contains(rest, l.name) {
			fmt.Fprintf(stdout, "== %s: %s\n%s\n", l.name, l.title, l.body)
		}
	}
	return nil
}

func lessonNames(ls []lesson) []string {
	var names []string
	for _, l := range ls {
		names = append(names, l.name)
	}
	return names
}

// teachOptions keep background timing out of the output: the memtable
// rotates only when Flush asks (64 MiB is far more than the lesson
// writes), and L0 stays under its compaction threshold (the lesson makes
// at most 6 L0 tables), so no compaction runs unless Compact is called.
func teachOptions(l *lsm.EventListener) *lsm.Options {
	return &lsm.Options{
		MemtableSize:              64 << 20,
		BlockSize:                 1024,
		L0CompactionThreshold:     8,
		L0SlowdownWritesThreshold: 8,
		L0StopWritesThreshold:     12,
		EventListener:             l,
	}
}

// flushHold holds the next flush at its start (lsm.EventListener's
// FlushBegin) until released, so its memtable stays immutable while the
// lesson reads through it.
type flushHold struct {
	mu      sync.Mutex
	armed   bool
	begun   chan struct{}
	release chan struct{}
	once    sync.Once
}

func newFlushHold() *flushHold {
	return &flushHold{begun: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h *flushHold) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

// flushBegin is the FlushBegin callback: the first flush after arm waits
// for release; every other flush goes on.
func (h *flushHold) flushBegin(lsm.FlushInfo) {
	h.mu.Lock()
	armed := h.armed
	h.armed = false
	h.mu.Unlock()
	if armed {
		h.begun <- struct{}{}
		<-h.release
	}
}

// let releases the held flush; it is safe to call more than once, and
// must be called before Close, which waits for the flush.
func (h *flushHold) let() { h.once.Do(func() { close(h.release) }) }

// teach builds the lesson DB in dir and returns its sections. dir must
// not hold anything yet: the file numbers the chapter shows are a new
// DB's.
func teach(dir string) (lessons []lesson, err error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: the lesson builds a new DB, so that its file numbers are the chapter's", dir)
	}
	hold := newFlushHold()
	var mu sync.Mutex
	var flushes []lsm.FlushInfo
	listener := &lsm.EventListener{
		FlushBegin: hold.flushBegin,
		FlushEnd: func(fi lsm.FlushInfo) {
			mu.Lock()
			flushes = append(flushes, fi)
			mu.Unlock()
		},
	}
	db, err := lsm.Open(dir, teachOptions(listener))
	if err != nil {
		return nil, err
	}
	defer func() {
		hold.let()
		err = errors.Join(err, db.Close())
	}()
	t := &teacher{db: db}
	add := func(name, title, body string) { lessons = append(lessons, lesson{name, title, body}) }
	add("fpr", "what bits per key buy (filter.StandardFPR, CacheLineFPR)", fprLesson())

	// The tree, oldest data first. L6: the even keys k000…k998, compacted
	// down to the last level.
	for i := 0; i < 1000; i += 2 {
		t.put(i, "v1")
	}
	t.check(db.Compact())
	// An older L0 table: every tenth key overwritten, and k152 deleted.
	for i := 0; i < 1000; i += 10 {
		t.put(i, "v2")
	}
	t.check(db.Delete(key(152)))
	t.check(db.Flush())
	// A newer L0 table: new odd keys, k005, k015, …, k995.
	for i := 5; i < 1000; i += 10 {
		t.put(i, "v3")
	}
	t.check(db.Flush())
	// Two immutable memtables, held: the older overwrites k600…k698, the
	// newer k700…k798. The first flush waits at its start; the second
	// Flush rotates its memtable and queues behind it.
	flushed := make(chan error, 2)
	for i := 600; i < 700; i += 2 {
		t.put(i, "v4")
	}
	hold.arm()
	go func() { flushed <- db.Flush() }()
	<-hold.begun
	for i := 700; i < 800; i += 2 {
		t.put(i, "v5")
	}
	go func() { flushed <- db.Flush() }()
	for deadline := time.Now().Add(time.Minute); db.Stats().MemtablesQueued != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, errors.New("teach: the second memtable never turned immutable")
		}
	}
	// The active memtable: k900…k948 overwritten.
	for i := 900; i < 950; i += 2 {
		t.put(i, "v6")
	}
	if t.err != nil {
		return nil, t.err
	}
	add("db", "the lesson DB, newest source first", t.tree([][3]string{
		{"active memtable", "k900..k948", "25"},
		{"immutable memtable 1 of 2", "k700..k798", "50"},
		{"immutable memtable 2 of 2", "k600..k698", "50"},
	}))

	add("memtable", "a hit in the active memtable", t.explain("k920"))
	add("immutable", "a hit in an immutable memtable, behind the combined filter", t.explain("k610"))
	add("deep", "a hit in the last level, asked twice: from the file, then the cache",
		t.explain("k302")+t.explain("k302"))
	add("absent", "an absent key every filter turns away", t.explain("k301"))
	fpKey, asked, fpTrace := t.firstFalsePositive()
	add("false-positive", "a data block read for nothing",
		fmt.Sprintf("Odd keys asked in order from k001, skipping the k##5 of L0: the first\n%d were turned away by every filter; %s is the first a filter admits.\n", asked-1, fpKey)+
			fpTrace)
	add("tombstone", "a key hidden by a tombstone: older sources are not asked", t.explain("k152"))

	// Let the held flushes go, and flush the active memtable too: the
	// remaining lessons are about writes, against a tree with no memtable
	// data.
	hold.let()
	for range 2 {
		t.check(<-flushed)
	}
	t.check(db.Flush())
	add("elided", "a delete the filters prove unnecessary, and one they cannot", t.deletes())
	add("annihilated", "a put and its delete, dropped together by the flush", t.annihilate(func() []lsm.FlushInfo {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(flushes)
	}))
	return lessons, t.err
}

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
func (t *teacher) tree(memtables [][3]string) string {
	var b strings.Builder
	b.WriteString("source                      keys        entries  tombstones\n")
	for _, m := range memtables {
		fmt.Fprintf(&b, "%-27s %-10s  %7s  %10d\n", m[0], m[1], m[2], 0)
	}
	tables, err := t.db.Tables()
	t.check(err)
	for _, tab := range tables {
		fmt.Fprintf(&b, "%-27s %-10s  %7d  %10d\n", fmt.Sprintf("L%d %06d.sst", tab.Level, tab.FileNum),
			fmt.Sprintf("%s..%s", tab.Smallest, tab.Largest), tab.Entries, tab.Tombstones)
	}
	return b.String()
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
