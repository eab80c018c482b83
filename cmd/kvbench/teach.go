package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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
	// The names are checked before the DB is built: a typo should cost
	// nothing, and leave no directory behind.
	for _, name := range rest {
		if !slices.Contains(lessonOrder, name) {
			return badUsage(stderr, teachUsage, "teach: no section %q (want one of %s)", name, strings.Join(lessonOrder, ", "))
		}
	}
	lessons, err := teach(dir)
	if err != nil {
		return err
	}
	for _, l := range lessons {
		if len(rest) == 0 || slices.Contains(rest, l.name) {
			fmt.Fprintf(stdout, "== %s: %s\n%s\n", l.name, l.title, l.body)
		}
	}
	return nil
}

// lessonOrder names teach's sections in the order it makes them, so that
// the names asked for are checked before anything is built;
// TestTeachMatchesDocs holds it to what teach returns.
var lessonOrder = []string{"fpr", "db", "memtable", "immutable", "deep", "absent", "false-positive", "tombstone",
	"elided", "annihilated", "range", "range-compact", "prefix", "ranges", "tree-wide"}

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
	add("range", "keys hidden by a range tombstone, newest source first", t.rangeDelete())
	if t.err != nil {
		return nil, t.err
	}
	// The merges of a range tombstone, on a DB of their own.
	tmp, err := os.MkdirTemp("", "kvbench-teach-")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
	compacted, err := rangeCompact(filepath.Join(tmp, "range"))
	if err != nil {
		return nil, err
	}
	add("range-compact", "merges drop what a range tombstone covers, then it", compacted)
	prefixed, err := prefixLesson(filepath.Join(tmp, "prefix"))
	add("prefix", "an iterator over a prefix skips the tables whose filter rules it out", prefixed)
	if err != nil {
		return nil, err
	}
	ranged, err := rangeLesson(filepath.Join(tmp, "ranges"))
	add("ranges", "bounded iterators skip the tables whose range filter rules them out", ranged)
	if err != nil {
		return nil, err
	}
	treeWide, err := treeWideLesson(filepath.Join(tmp, "tree-wide"))
	add("tree-wide", "one filter over the tree names the levels that may hold a key", treeWide)
	return lessons, err
}
