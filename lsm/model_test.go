package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// model is the map the DB must agree with.
type model map[string]string

func (m model) clone() model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// sortedRange returns the model's keys in [lo, hi), nil bounds open.
func (m model) sortedRange(lo, hi []byte) []string {
	var keys []string
	for k := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

type reader interface {
	Get([]byte) ([]byte, error)
	NewIter(*IterOptions) *Iter
}

// checkAgainst compares point reads and iteration of r with m.
func checkAgainst(t *testing.T, seed uint64, step int, rng *rand.Rand, r reader, m model, keySpace int) {
	t.Helper()
	for range 20 {
		k := modelKey(rng, keySpace)
		v, err := r.Get([]byte(k))
		want, ok := m[k]
		if ok != (err == nil) || (ok && string(v) != want) || (!ok && !errors.Is(err, ErrNotFound)) {
			t.Fatalf("seed %d step %d: Get(%q) = %q, %v; model %q, %v", seed, step, k, v, err, want, ok)
		}
	}
	if mg, ok := r.(interface {
		MultiGet([][]byte) ([][]byte, []error)
	}); ok {
		var keys [][]byte
		for range rng.IntN(20) {
			keys = append(keys, []byte(modelKey(rng, keySpace)))
		}
		vals, errs := mg.MultiGet(keys)
		for i, k := range keys {
			want, ok := m[string(k)]
			if ok != (errs[i] == nil) || (ok && string(vals[i]) != want) || (!ok && !errors.Is(errs[i], ErrNotFound)) {
				t.Fatalf("seed %d step %d: MultiGet(%q) = %q, %v; model %q, %v", seed, step, k, vals[i], errs[i], want, ok)
			}
		}
	}
	var lo, hi []byte
	if rng.IntN(2) == 0 {
		lo = []byte(modelKey(rng, keySpace))
	}
	if rng.IntN(2) == 0 {
		hi = []byte(modelKey(rng, keySpace))
	}
	want := m.sortedRange(lo, hi)
	it := r.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
	defer it.Close()
	var got []string
	if rng.IntN(2) == 0 {
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
			if string(it.Value()) != m[string(it.Key())] {
				t.Fatalf("seed %d step %d: iter value of %q = %q, model %q", seed, step, it.Key(), it.Value(), m[string(it.Key())])
			}
		}
	} else {
		for ok := it.Last(); ok; ok = it.Prev() {
			got = append(got, string(it.Key()))
		}
		slices.Reverse(got)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("seed %d step %d: iter: %v", seed, step, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d step %d: iterated [%q,%q):\n got %q\nwant %q", seed, step, lo, hi, got, want)
	}
	walkAgainst(t, rng, it, want, func() string { return modelKey(rng, keySpace) },
		fmt.Sprintf("seed %d step %d: walk in [%q,%q)", seed, step, lo, hi))
}

// walkAgainst takes it on a random walk of seeks (to keys drawn by key)
// and steps in both directions, and checks each position against all, the
// keys it must yield in order; where names the walk in a failure.
func walkAgainst(t *testing.T, rng *rand.Rand, it *Iter, all []string, key func() string, where string) {
	t.Helper()
	pos := -1
	var walk []string
	for range 30 {
		switch rng.IntN(4) {
		case 0:
			k := key()
			walk = append(walk, "SeekGE "+k)
			it.SeekGE([]byte(k))
			pos, _ = slices.BinarySearch(all, k)
			if pos == len(all) {
				pos = -1
			}
		case 1:
			k := key()
			walk = append(walk, "SeekLT "+k)
			it.SeekLT([]byte(k))
			pos, _ = slices.BinarySearch(all, k)
			pos--
		case 2:
			if pos < 0 {
				continue
			}
			walk = append(walk, "Next")
			it.Next()
			if pos++; pos == len(all) {
				pos = -1
			}
		case 3:
			if pos < 0 {
				continue
			}
			walk = append(walk, "Prev")
			it.Prev()
			pos--
		}
		if it.Valid() != (pos >= 0) || (pos >= 0 && string(it.Key()) != all[pos]) {
			var got string
			if it.Valid() {
				got = string(it.Key())
			}
			t.Fatalf("%s: after %q iterator at %q (valid %v, err %v), model index %d of %q", where, walk, got, it.Valid(), it.Err(), pos, all)
		}
	}
}

// deleteRange deletes the model's keys in [lo, hi).
func (m model) deleteRange(lo, hi []byte) {
	for _, k := range m.sortedRange(lo, hi) {
		delete(m, k)
	}
}

// modelRange draws a DeleteRange: mostly a few keys wide, sometimes from
// the empty key or to beyond every key.
func modelRange(rng *rand.Rand, keySpace int) (lo, hi []byte) {
	i := rng.IntN(keySpace)
	lo = []byte(fmt.Sprintf("key%05d", i))
	hi = []byte(fmt.Sprintf("key%05d", i+1+rng.IntN(keySpace/20)))
	switch rng.IntN(20) {
	case 0:
		lo = []byte{}
	case 1:
		hi = []byte("key\xff")
	case 2:
		lo = append(lo, 0) // just above a key
	}
	return lo, hi
}

func modelKey(rng *rand.Rand, keySpace int) string {
	return fmt.Sprintf("key%05d", rng.IntN(keySpace))
}

func modelSeed(t *testing.T) uint64 {
	if s := os.Getenv("MONBAN_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return rand.Uint64()
}

// TestDBMatchesModel runs a long random sequence of operations against the
// DB and a map, with tiny memtables and levels so that flushes and
// compactions happen constantly. MONBAN_STEPS lengthens it; MONBAN_SEED
// replays a failure.
func TestDBMatchesModel(t *testing.T) {
	seed := modelSeed(t)
	steps := 3000
	if s := os.Getenv("MONBAN_STEPS"); s != "" {
		steps, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	fs := vfs.NewMem()
	opts := &Options{
		FS: fs, MemtableSize: 2 << 10, BlockSize: 256, TargetFileSize: 4 << 10,
		LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2, L0StopWritesThreshold: 8,
		// Pinned, every table paged, or some of each.
		PinnedMetaLimit: []int64{0, -1, 4 << 10}[rng.IntN(3)],
		FilterScope:     randFilterScope(rng),
	}
	dir := "/db"
	d, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close() }()
	const keySpace = 400
	m := model{}
	type snap struct {
		s *Snapshot
		m model
	}
	var snaps []snap
	// checkpoints are taken as the run goes and checked, read-only, at the
	// next reopen, after the compactions meanwhile have deleted or
	// rewritten tables they share with the DB.
	type checkpoint struct {
		dir string
		m   model
	}
	var checkpoints []checkpoint
	var ncheckpoints int
	newCheckpoint := func(step int) string {
		ncheckpoints++
		dir := fmt.Sprintf("/checkpoint%d", ncheckpoints)
		if err := d.Checkpoint(dir); err != nil {
			t.Fatalf("seed %d step %d: Checkpoint: %v", seed, step, err)
		}
		return dir
	}
	// deleteOnly counts delete-only compactions over every Open, to show
	// that the run reached them.
	var deleteOnly uint64
	// A batch bound the larger batches pass, so that some are refused
	// whole: committed and refused count both outcomes.
	defer func(n int) { maxBatchSize = n }(maxBatchSize)
	maxBatchSize = 96
	var committed, refused int
	for step := range steps {
		switch r := rng.IntN(100); {
		case r < 40:
			k, v := modelKey(rng, keySpace), fmt.Sprintf("v%d-%s", step, bytes.Repeat([]byte("x"), rng.IntN(40)))
			if err := d.Put([]byte(k), []byte(v)); err != nil {
				t.Fatalf("seed %d step %d: Put: %v", seed, step, err)
			}
			m[k] = v
		case r < 55:
			k := modelKey(rng, keySpace)
			if err := d.Delete([]byte(k)); err != nil {
				t.Fatalf("seed %d step %d: Delete: %v", seed, step, err)
			}
			delete(m, k)
		case r < 60:
			lo, hi := modelRange(rng, keySpace)
			if err := d.DeleteRange(lo, hi); err != nil {
				t.Fatalf("seed %d step %d: DeleteRange(%q, %q): %v", seed, step, lo, hi, err)
			}
			m.deleteRange(lo, hi)
		case r < 70:
			var b Batch
			next := m.clone()
			for range rng.IntN(10) {
				k := modelKey(rng, keySpace)
				switch rng.IntN(8) {
				case 0, 1:
					b.Delete([]byte(k))
					delete(next, k)
				case 2:
					lo, hi := modelRange(rng, keySpace)
					b.DeleteRange(lo, hi)
					next.deleteRange(lo, hi)
				default:
					v := fmt.Sprintf("b%d", step)
					b.Put([]byte(k), []byte(v))
					next[k] = v
				}
			}
			switch err := d.Write(&b); {
			case errors.Is(err, ErrBatchTooLarge):
				refused++ // nothing of it applied: m stays
			case err != nil:
				t.Fatalf("seed %d step %d: Write: %v", seed, step, err)
			default:
				m = next
				committed++
			}
		case r < 85:
			checkAgainst(t, seed, step, rng, d, m, keySpace)
		case r < 89:
			snaps = append(snaps, snap{d.NewSnapshot(), m.clone()})
		case r < 93 && len(snaps) > 0:
			i := rng.IntN(len(snaps))
			checkAgainst(t, seed, step, rng, snaps[i].s, snaps[i].m, keySpace)
			if rng.IntN(2) == 0 {
				snaps[i].s.Close()
				snaps = slices.Delete(snaps, i, i+1)
			}
		case r < 96:
			if err := d.Flush(); err != nil {
				t.Fatalf("seed %d step %d: Flush: %v", seed, step, err)
			}
		case r < 97:
			checkpoints = append(checkpoints, checkpoint{newCheckpoint(step), m.clone()})
		default:
			for _, c := range checkpoints {
				roOpts := *opts
				roOpts.ReadOnly = true
				ro, err := Open(c.dir, &roOpts)
				if err != nil {
					t.Fatalf("seed %d step %d: Open(%s) read-only: %v", seed, step, c.dir, err)
				}
				checkAgainst(t, seed, step, rng, ro, c.m, keySpace)
				if err := ro.Close(); err != nil {
					t.Fatalf("seed %d step %d: Close(%s): %v", seed, step, c.dir, err)
				}
				removeAll(t, fs, c.dir)
			}
			checkpoints = nil
			// One reopen in three moves the DB into a checkpoint taken
			// with its snapshots open, and removes its old directory.
			var moveTo string
			if rng.IntN(3) == 0 {
				moveTo = newCheckpoint(step)
			}
			for _, s := range snaps {
				s.s.Close()
			}
			snaps = nil
			deleteOnly += d.Stats().Compactions.DeleteOnly
			if err := d.Close(); err != nil {
				t.Fatalf("seed %d step %d: Close: %v", seed, step, err)
			}
			if moveTo != "" {
				removeAll(t, fs, dir)
				dir = moveTo
			}
			// Switching scope reopens tables written under the other one.
			opts.FilterScope = randFilterScope(rng)
			if d, err = Open(dir, opts); err != nil {
				t.Fatalf("seed %d step %d: reopen: %v", seed, step, err)
			}
		}
	}
	checkAgainst(t, seed, steps, rng, d, m, keySpace)
	st := d.Stats()
	t.Logf("seed %d: %d flushes, compactions %+v (%d delete-only over every Open), L0..L6 files %v, drops flush %v compaction %v, deletes elided %d, %d checkpoints, batches %d committed and %d refused as too large",
		seed, st.Flushes, st.Compactions, deleteOnly+st.Compactions.DeleteOnly, levelFiles(st), st.FlushDrops, st.CompactionDrops, st.DeletesElided, ncheckpoints, committed, refused)
	if steps >= 1000 && (committed == 0 || refused == 0) {
		t.Errorf("seed %d: batches %d committed and %d refused: the run missed one outcome", seed, committed, refused)
	}
}

// randFilterScope picks PerTable or TreeWide.
func randFilterScope(rng *rand.Rand) FilterScope {
	return []FilterScope{PerTable, TreeWide}[rng.IntN(2)]
}

func levelFiles(st Stats) []int {
	var n []int
	for _, l := range st.Levels {
		n = append(n, l.Files)
	}
	return n
}

// Snapshot implements reader.
var _ reader = (*Snapshot)(nil)
var _ reader = (*DB)(nil)
