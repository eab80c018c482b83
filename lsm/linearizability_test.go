package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestLinearizable checks that concurrent Put, Get, Delete, DeleteRange,
// Write, full scans, scans with both bounds and Checkpoints (each read
// whole, a scan of the state it holds) form a linearizable
// history: there is one order of all operations, consistent with real
// time (an operation that returned before another was called comes
// first), in which every read returns what a sequential map would. That
// is the promise that reads see exactly a published prefix of commits and
// that batches are atomic.
//
// Each round opens a fresh DB with tiny memtables, runs linzClients
// clients for linzOpsPerClient operations each over linzKeys keys while a
// churn goroutine flushes and compacts, and hands the history to
// porcupine. Every write stores a value no other write stores, so a read
// names the write it saw. Rounds repeat for each option set until the
// time is up (stressDuration).
func TestLinearizable(t *testing.T) {
	moreThreadsThanCores(t)
	configs := []struct {
		name string
		opts Options
		// rangeFilter draws Options.RangeFilter per round from its seed
		// (randomRangeFilter): bounded scans ask the filters, and a table
		// they rule out wrongly hides a write the history then lacks.
		rangeFilter bool
	}{
		// Deletes of absent keys elided.
		{"default", Options{}, false},
		// Every delete leaves a tombstone.
		{"KeepAbsentDeletes", Options{KeepAbsentDeletes: true}, false},
		// No filter answers "absent": every read walks every source.
		{"IgnoreFilters", Options{IgnoreFilters: true}, false},
		// Every table paged: index partitions and filter pages shared by
		// concurrent reads through the block cache.
		{"Paged", Options{PinnedMetaLimit: -1}, false},
		// Prefixes in every filter beside the keys.
		{"Split", Options{Split: fixedSplit("first", 1)}, false},
		// Range filters of a precision and range length drawn per round,
		// which the bounded scans ask.
		{"RangeFilter", Options{}, true},
		// One filter over the tree, asked by concurrent reads while
		// flushes and compactions file and remove keys under its lock.
		{"TreeWide", Options{FilterScope: TreeWide}, false},
	}
	total := stressDuration(t, 3*time.Second)
	seeds := stressSeeds(t)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			deadline := start.Add(total / time.Duration(len(configs)))
			var rounds, ops, unknown int
			var skips uint64
			for rounds == 0 || time.Now().Before(deadline) {
				seed := seeds()
				opts := tinyOptions(c.opts)
				if c.rangeFilter {
					opts.RangeFilter = randomRangeFilter(rand.New(rand.NewPCG(seed, linzClients)))
				}
				history, st := runLinzRound(t, opts, seed)
				skips += st.RangeSkips
				res, info := porcupine.CheckOperationsVerbose(kvModel, history, 30*time.Second)
				switch res {
				case porcupine.Illegal:
					path := filepath.Join(os.TempDir(), fmt.Sprintf("monban-linz-%s-%d.html", c.name, seed))
					if err := porcupine.VisualizePath(kvModel, info, path); err != nil {
						t.Logf("writing the visualization: %v", err)
					}
					t.Fatalf("seed %d (MONBAN_SEED=%d to replay), %s %+v: history of %d operations is not linearizable (round %d, after %.1fs); visualization: %s",
						seed, seed, c.name, opts.RangeFilter, len(history), rounds+1, time.Since(start).Seconds(), path)
				case porcupine.Unknown:
					unknown++ // the checker timed out: no verdict, not a failure
				}
				rounds++
				ops += len(history)
			}
			t.Logf("%s: %d histories, %d operations checked (%d timed out), %d tables skipped by range filters in %.1fs",
				c.name, rounds, ops, unknown, skips, time.Since(start).Seconds())
		})
	}
}

const (
	linzKeys         = 6
	linzClients      = 5
	linzOpsPerClient = 60
)

// kvState is the model's state: kvState[k] is the id of the write whose
// value key k holds, 0 when k is absent. An array is a value, so Step
// copies it and never mutates the state it was given.
type kvState [linzKeys]uint32

type linzOpKind uint8

const (
	opGet linzOpKind = iota
	opPut
	opDelete
	opBatch
	opScan
	opDeleteRange // writes: deletes of consecutive keys, made by one DeleteRange
	opRangeScan   // a scan with both bounds: the keys of points in [lower, upper)
	opCheckpoint  // a Checkpoint into dir, read whole: a scan of the state it holds
)

// linzWrite is one write: a put of value id val, or a delete (val 0).
type linzWrite struct {
	key int
	val uint32
}

// linzInput is what a client asked for; for a batch, writes in order.
type linzInput struct {
	kind   linzOpKind
	writes []linzWrite // put and delete: one; batch: several
	key    int         // get
	// sync makes a write with lsm.Sync: in a commit group with writes
	// without it, it is published after them (syncOrder), which must
	// still be an order a sequential history could have.
	sync bool
	// lower and upper bound a range scan by points (linzPoint), between
	// keys as often as at them; reverse runs it from its last key.
	lower, upper uint64
	reverse      bool
	dir          string // checkpoint's, unique to the operation
}

// covers reports whether a range scan's bounds hold key k.
func (in linzInput) covers(k int) bool {
	p := linzPoint(k)
	return in.lower <= p && p < in.upper
}

// linzOutput is what a read returned: get's value id (0: not found), or
// the whole state a scan saw (a range scan: the keys it covers, the rest
// 0).
type linzOutput struct {
	val  uint32
	scan kvState
}

// kvModel is a sequential map. A batch applies all its writes in one step,
// and a scan returns the whole map (or a range of it) in one step, so no
// partitioning by key: both span keys.
var kvModel = porcupine.Model{
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		s := state.(kvState)
		in, out := input.(linzInput), output.(linzOutput)
		switch in.kind {
		case opGet:
			return s[in.key] == out.val, s
		case opScan, opCheckpoint:
			return s == out.scan, s
		case opRangeScan:
			var want kvState
			for k := range want {
				if in.covers(k) {
					want[k] = s[k]
				}
			}
			return want == out.scan, s
		}
		for _, w := range in.writes {
			s[w.key] = w.val
		}
		return true, s
	},
	Equal: func(a, b any) bool { return a.(kvState) == b.(kvState) },
	Hash: func(state any) uint64 {
		var h uint64
		for _, v := range state.(kvState) {
			h = h*1000003 + uint64(v)
		}
		return h
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linzInput), output.(linzOutput)
		switch in.kind {
		case opGet:
			return fmt.Sprintf("get(k%d) → %s", in.key, describeVal(out.val))
		case opScan:
			return "scan → " + describeState(out.scan)
		case opCheckpoint:
			return "checkpoint → " + describeState(out.scan)
		case opRangeScan:
			return fmt.Sprintf("scan[%d, %d) reverse=%v → %s", in.lower, in.upper, in.reverse, describeState(out.scan))
		}
		var parts []string
		for _, w := range in.writes {
			if w.val == 0 {
				parts = append(parts, fmt.Sprintf("delete(k%d)", w.key))
			} else {
				parts = append(parts, fmt.Sprintf("put(k%d, %d)", w.key, w.val))
			}
		}
		switch in.kind {
		case opBatch:
			return "batch{" + strings.Join(parts, ", ") + "}"
		case opDeleteRange:
			return fmt.Sprintf("deleteRange(k%d, k%d)", in.writes[0].key, in.writes[len(in.writes)-1].key+1)
		}
		return parts[0]
	},
	DescribeState: func(state any) string { return describeState(state.(kvState)) },
}

func describeVal(v uint32) string {
	if v == 0 {
		return "absent"
	}
	return strconv.FormatUint(uint64(v), 10)
}

func describeState(s kvState) string {
	var parts []string
	for k, v := range s {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("k%d:%d", k, v))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// linzGap spaces the keys' points, so that a range scan may start or end
// between two keys and hold none of them.
const linzGap = 4

// linzPoint is key k's point: an integer whose 8-byte big-endian encoding
// is the key, spaced linzGap apart, so that a range filter (which projects
// a key to its first 8 bytes) tells every key and gap apart. Each key's
// first byte is 'k', the prefix the Split config puts in the filters.
func linzPoint(k int) uint64 { return 'k'<<56 | uint64(k)*linzGap }

func linzKey(k int) []byte { return binary.BigEndian.AppendUint64(nil, linzPoint(k)) }

// parseLinzKey returns the index of a key linzKey makes, false for any
// other.
func parseLinzKey(key []byte) (int, bool) {
	if len(key) != 8 {
		return 0, false
	}
	d := binary.BigEndian.Uint64(key) - linzPoint(0)
	return int(d / linzGap), d%linzGap == 0 && d/linzGap < linzKeys
}

// linzValue encodes write id val, padded so that a few dozen writes fill a
// tiny memtable.
func linzValue(val uint32) []byte {
	return fmt.Appendf(nil, "%010d%s", val, strings.Repeat(".", 40))
}

func parseLinzValue(v []byte) (uint32, error) {
	if len(v) != 50 {
		return 0, fmt.Errorf("value %q is not one the test wrote", v)
	}
	n, err := strconv.ParseUint(string(v[:10]), 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("value %q is not one the test wrote", v)
	}
	return uint32(n), nil
}

// runLinzRound runs one history on a fresh DB and returns it, with the
// DB's Stats at the end. An error from the engine fails the test at once:
// the model knows no errors.
func runLinzRound(t *testing.T, opts *Options, seed uint64) ([]porcupine.Operation, Stats) {
	db, err := openStressDB(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var (
		mu       sync.Mutex
		firstErr error
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		if firstErr == nil {
			firstErr = fmt.Errorf(format, args...)
		}
		mu.Unlock()
	}
	stop := make(chan struct{})
	var bg, clients sync.WaitGroup
	churn(db, stop, &bg, fail)

	epoch := time.Now() // time.Since reads the monotonic clock
	histories := make([][]porcupine.Operation, linzClients)
	for c := range linzClients {
		clients.Add(1)
		go func() {
			defer clients.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range linzOpsPerClient {
				// Write ids are unique: client c's i-th operation writes
				// c*100000+i*10+j+1 for its j-th write (0 means absent).
				id := uint32(c*100000 + i*10 + 1)
				in := linzRandomInput(rng, id)
				call := time.Since(epoch).Nanoseconds()
				out, err := linzApply(db, in)
				ret := time.Since(epoch).Nanoseconds()
				if err != nil {
					fail("seed %d client %d: %v", seed, c, err)
					return
				}
				histories[c] = append(histories[c], porcupine.Operation{
					ClientId: c, Input: in, Call: call, Output: out, Return: ret,
				})
				if rng.IntN(4) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	clients.Wait()
	close(stop)
	bg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	var all []porcupine.Operation
	for _, h := range histories {
		all = append(all, h...)
	}
	return all, db.Stats()
}

// linzRandomInput picks an operation: reads and writes about evenly, all
// kinds often, a third of the writes with lsm.Sync. ids id, id+1, ... are
// this operation's to write.
func linzRandomInput(rng *rand.Rand, id uint32) linzInput {
	in := linzRandomOp(rng, id)
	in.sync = in.kind != opGet && in.kind != opScan && in.kind != opRangeScan && in.kind != opCheckpoint && rng.IntN(3) == 0
	return in
}

func linzRandomOp(rng *rand.Rand, id uint32) linzInput {
	switch r := rng.IntN(100); {
	case r < 22:
		return linzInput{kind: opGet, key: rng.IntN(linzKeys)}
	case r < 28:
		return linzInput{kind: opScan}
	case r < 30:
		return linzInput{kind: opCheckpoint, dir: fmt.Sprintf("checkpoint-%d", id)}
	case r < 40:
		// Up to two keys' worth of points from anywhere among the keys,
		// sometimes none: a range holding no key, one, or two.
		lower := linzPoint(0) + rng.Uint64N(linzKeys*linzGap)
		return linzInput{kind: opRangeScan, lower: lower, upper: lower + rng.Uint64N(2*linzGap+1), reverse: rng.IntN(2) == 0}
	case r < 65:
		return linzInput{kind: opPut, writes: []linzWrite{{rng.IntN(linzKeys), id}}}
	case r < 74:
		return linzInput{kind: opDelete, writes: []linzWrite{{rng.IntN(linzKeys), 0}}}
	case r < 80:
		lo := rng.IntN(linzKeys)
		hi := lo + 1 + rng.IntN(linzKeys-lo)
		in := linzInput{kind: opDeleteRange}
		for k := lo; k < hi; k++ {
			in.writes = append(in.writes, linzWrite{key: k})
		}
		return in
	default:
		// Several distinct keys, puts and deletes mixed: a delete whose key
		// was just put in the active memtable meets its only put.
		keys := rng.Perm(linzKeys)[:2+rng.IntN(3)]
		in := linzInput{kind: opBatch}
		for j, k := range keys {
			w := linzWrite{key: k, val: id + uint32(j)}
			if rng.IntN(2) == 0 {
				w.val = 0
			}
			in.writes = append(in.writes, w)
		}
		return in
	}
}

func linzApply(db *DB, in linzInput) (linzOutput, error) {
	var out linzOutput
	switch in.kind {
	case opGet:
		v, err := db.Get(linzKey(in.key))
		switch {
		case errors.Is(err, ErrNotFound):
			return out, nil
		case err != nil:
			return out, fmt.Errorf("get k%d: %w", in.key, err)
		}
		out.val, err = parseLinzValue(v)
		return out, err
	case opScan:
		return linzScan(db.NewIter(nil), false)
	case opRangeScan:
		bounds := &IterOptions{
			LowerBound: binary.BigEndian.AppendUint64(nil, in.lower),
			UpperBound: binary.BigEndian.AppendUint64(nil, in.upper),
		}
		return linzScan(db.NewIter(bounds), in.reverse)
	case opCheckpoint:
		return linzCheckpoint(db, in.dir)
	}
	wo := NoSync
	if in.sync {
		wo = Sync
	}
	switch in.kind {
	case opPut:
		w := in.writes[0]
		return out, db.Put(linzKey(w.key), linzValue(w.val), wo)
	case opDelete:
		return out, db.Delete(linzKey(in.writes[0].key), wo)
	case opDeleteRange:
		lo, hi := in.writes[0].key, in.writes[len(in.writes)-1].key+1
		return out, db.DeleteRange(linzKey(lo), linzKey(hi), wo)
	}
	var b Batch
	for _, w := range in.writes {
		if w.val == 0 {
			b.Delete(linzKey(w.key))
		} else {
			b.Put(linzKey(w.key), linzValue(w.val))
		}
	}
	return out, db.Write(&b, wo)
}

// linzCheckpoint writes a checkpoint of db into dir, reads it whole,
// opened read-only, and removes it. Its state is fixed once Checkpoint
// returns, so the read may come after.
func linzCheckpoint(db *DB, dir string) (linzOutput, error) {
	if err := db.Checkpoint(dir); err != nil {
		return linzOutput{}, fmt.Errorf("checkpoint: %w", err)
	}
	c, err := Open(dir, &Options{FS: db.fs, ReadOnly: true})
	if err != nil {
		return linzOutput{}, fmt.Errorf("open of the checkpoint: %w", err)
	}
	out, err := linzScan(c.NewIter(nil), false)
	err = errors.Join(err, c.Close())
	names, errList := db.fs.List(dir)
	err = errors.Join(err, errList)
	for _, name := range names {
		err = errors.Join(err, db.fs.Remove(filepath.Join(dir, name)))
	}
	return out, errors.Join(err, db.fs.Remove(dir))
}

// linzScan reads every key of it, backward when reverse, and closes it.
// The model checks the keys' values, and a bounded iterator's bounds
// through them; the order is checked here.
func linzScan(it *Iter, reverse bool) (linzOutput, error) {
	var out linzOutput
	first, step := it.First, it.Next
	if reverse {
		first, step = it.Last, it.Prev
	}
	prev := -1
	for ok := first(); ok; ok = step() {
		k, ok := parseLinzKey(it.Key())
		if !ok {
			it.Close()
			return out, fmt.Errorf("scan found key %x the test never wrote", it.Key())
		}
		if prev >= 0 && (k == prev || (k > prev) == reverse) {
			it.Close()
			return out, fmt.Errorf("scan (reverse %v) found key %d after %d", reverse, k, prev)
		}
		n, err := parseLinzValue(it.Value())
		if err != nil {
			it.Close()
			return out, fmt.Errorf("scan key %d: %w", k, err)
		}
		out.scan[k], prev = n, k
	}
	return out, it.Close()
}
