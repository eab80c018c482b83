package main

import (
	"fmt"
	"sort"
)

// Engine is the surface every key-value engine under test exposes to the
// harness. The harness drives one engine at a time. Put, Get and Delete
// must be safe for concurrent use: with -threads N they are called from N
// goroutines at once. Open, Flush, Close and the optional interfaces'
// methods are called only while no other call is in flight (an adapter may
// replace its handle in Flush, as goleveldb's does).
type Engine interface {
	// Open creates (or opens) a database in dir. The harness always passes a
	// fresh, empty directory.
	Open(dir string, o Options) error
	// Put writes k=v, with an fsync of the engine's log before it returns
	// exactly when Options.Sync is set (every adapter must make the same
	// choice).
	Put(k, v []byte) error
	// Get reports whether k is present. The value need not be copied out.
	Get(k []byte) (found bool, err error)
	// Delete writes a tombstone for k (k may be absent).
	Delete(k []byte) error
	// Flush makes the memtable durable as SSTables and waits until background
	// compactions have quiesced, as far as the engine allows. Adapters must
	// document what they actually do here.
	Flush() error
	// Close releases everything; the directory may be reopened later by Open
	// (the -reopen flag does exactly that).
	Close() error
	// Name is the registry name of the engine (e.g. "pebble").
	Name() string
}

// Scanner is optional. Engines that implement it take part in the "scan"
// workload; for the others that workload is skipped with a note.
type Scanner interface {
	// Scan iterates forward from the first key >= start and visits up to n
	// entries, touching each value. It returns the number of entries visited.
	Scan(start []byte, n int) (int, error)
}

// CommitCounter is optional: engines that count their commits and the log
// fsyncs those waited for, so that a phase can report syncs per commit
// (with -sync and many writers, what group commit saved).
type CommitCounter interface {
	// CommitStats returns the counts since Open.
	CommitStats() (commits, walSyncs uint64)
}

// L0Counter is optional: engines that say how many tables their level 0
// holds, reported at the start of every phase but the fill (L0 tables
// left by writes cost every later read a probe each, and a scan a merge
// input each).
type L0Counter interface {
	L0Tables() int
}

// Describer is optional. Describe returns a one-line summary of the engine's
// on-disk shape (e.g. tables per level); it is printed after each run.
type Describer interface {
	Describe() string
}

// Options are the knobs the harness sets uniformly on every engine.
type Options struct {
	// BitsPerKey for the bloom filter on every level; 0 means no filter.
	BitsPerKey int
	// CacheBytes is the block cache size; 0 means as small as the engine
	// allows (no block cache).
	CacheBytes int64
	// MemtableBytes is the memtable (write buffer) size; 0 = engine default.
	MemtableBytes int64
	// Sync makes every Put and Delete fsync the engine's log before it
	// returns: monban Options.Sync, Pebble pebble.Sync, goleveldb
	// WriteOptions{Sync: true}.
	Sync bool
	// PrefixLen, if not 0, cuts keys after that many bytes into prefixes
	// for the engine's prefix filters: monban Options.Split, Pebble
	// Comparer.Split (whose filters then hold prefixes instead of keys);
	// goleveldb has none. Set when prefixmiss runs.
	PrefixLen int
	// RangeFilterBits, if not 0, gives every table a range filter of that
	// many bits per key over the first 8 bytes, tuned for ranges of
	// rangeLen: monban Options.RangeFilter; Pebble and goleveldb have
	// none. Set when rangemiss runs.
	RangeFilterBits int
	// PinnedMeta, if not 0, is monban's Options.PinnedMetaLimit (the
	// bytes of table indexes and filters held outside the block cache);
	// the other engines have no such knob. Set by an engine entry's
	// pinned=SIZE.
	PinnedMeta int64
}

func (o Options) String() string {
	s := fmt.Sprintf("bits=%d cache=%s memtable=%s", o.BitsPerKey, fmtSize(o.CacheBytes), fmtSize(o.MemtableBytes))
	if o.Sync {
		s += " sync"
	}
	if o.PrefixLen > 0 {
		s += fmt.Sprintf(" prefix=%d", o.PrefixLen)
	}
	if o.PinnedMeta != 0 {
		s += " pinned=" + fmtSize(o.PinnedMeta)
	}
	if o.RangeFilterBits > 0 {
		s += fmt.Sprintf(" rangefilter=%d/%d", o.RangeFilterBits, rangeLen)
	}
	return s
}

// registry maps an engine name (as used in -engines) to its constructor.
//
// ADDING AN ENGINE: put the adapter in its own file (engine_NAME.go), register
// it from that file's init function and require its module in go.mod; no
// other file needs to change.
var registry = map[string]func() Engine{}

func register(name string, ctor func() Engine) {
	if _, dup := registry[name]; dup {
		panic("engine registered twice: " + name)
	}
	registry[name] = ctor
}

func engineNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
