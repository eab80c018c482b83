package lsm

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/manifest"
)

// The tree-wide filter (Options.FilterScope = TreeWide; issue 29,
// docs/design.md "Tree-wide filter"): one filter.Maplet over the keys of
// every table, each key filed under its table's run, so that a lookup
// asks one filter for the levels that may hold a key instead of one per
// level and L0 table. It has two runs (treeRun): the last level, which
// holds most keys, and every level above it, L0 included; a key filed
// under a run sends the read to that run's levels, whose tables' own
// filters then pick among them. The levels above the last are one run
// because compactions move keys between them all the time: a key moved
// within a run keeps its entry (a share, treeShare), and only its move
// into the last level costs an insert and a removal.
//
// Invariant (the superset rule): for every Version a reader may hold,
// every key of every table at level L in it has an entry under run
// treeRun(L), unless the table is counted in uncovered[L], which makes
// every lookup name L. A table's keys are inserted before the edit that places it is
// installed (enter, from logAndApply) and removed only once no live
// Version holds it at that level (leave, from the deleter, with the
// placements manifest.VersionSet.TakeLeftPlacements reports). Extra
// entries cost only a false "maybe", a missing one a wrong answer: so
// whatever cannot be done exactly — a table without a key-hash block, a
// hash block that cannot be read, an insert into a full maplet — makes
// the filter name more levels, or give up (m nil: every level asked, the
// per-table path), never fewer.
//
// A reader takes mu for reading around its one probe. The changes —
// enter, leave, a build's snapshot and swap — are serialized by update
// and take mu for writing only in short steps: a swap of the maplet, or
// at most treeApplyChunk entries filed or removed. What takes long with
// the maplet in hand — a doubling (a pass over every slot), a build's
// replay — works on a copy only the change holding
// update can see, which readers never wait for. A build (Open's, and a
// rebuild once growth has cost the maplet fingerprint bits) reads the
// hash blocks of a snapshot of the placements without either lock; what
// enter and leave do meanwhile is queued for it and replayed before the
// swap.
type treeFilter struct {
	// hashes appends a table's key hashes (its key-hash block) to dst;
	// on an error it returns dst as given.
	hashes func(dst []uint64, f *manifest.FileMetadata) ([]uint64, error)
	// payloadBits is what a build gives each slot; growth takes a bit a
	// doubling, and a maplet grown below it is rebuilt. minSlots is the
	// smallest table a build makes (tests make it tiny, so that growth and
	// rebuilds happen often).
	payloadBits uint
	minSlots    uint64

	// update serializes the changes and guards what only they read:
	// placed, shares, uncovered, build and closed. A change holds it
	// throughout, so it may read m without mu.
	update sync.Mutex
	// mu guards what readers read: m and asked. Changing either takes
	// update, then mu for writing.
	mu sync.RWMutex
	m  *filter.Maplet // nil: not built yet, or given up; every level is asked
	// placed holds every placement entered and not left, true when m
	// holds its keys.
	placed map[placementKey]placement
	// shares lists, for each placement, the shares it is a side of.
	shares    map[placementKey][]*treeShare
	uncovered [NumLevels]int // per level, the placements placed but not in m
	asked     filter.RunSet  // the levels whose uncovered count is not 0
	build     *treeBuild     // the build running, if any
	closed    bool
	builds    sync.WaitGroup

	probes, negatives atomic.Uint64
	lines             atomic.Uint64 // the maplet's cache lines the probes read (Maplet.LookupLines)
	built             atomic.Uint64 // builds swapped in
}

type placementKey struct {
	level   int
	fileNum uint64
}

// run is the maplet run the placement's keys are filed under.
func (k placementKey) run() int { return treeRun(k.level) }

// treeRun is the maplet run of level's keys: the last level's own, or
// the upper run, 0, of every level above it.
func treeRun(level int) int {
	if level == NumLevels-1 {
		return level
	}
	return 0
}

// treeRunLevels are the levels each run sends a read to.
var treeRunLevels = func() (levels [NumLevels]filter.RunSet) {
	for level := range NumLevels {
		levels[treeRun(level)] |= 1 << level
	}
	return levels
}()

// treeLevels returns the levels of the runs in runs.
func treeLevels(runs filter.RunSet) filter.RunSet {
	var levels filter.RunSet
	for run := range NumLevels {
		if runs.Has(run) {
			levels |= treeRunLevels[run]
		}
	}
	return levels
}

type placement struct {
	f       *manifest.FileMetadata
	covered bool
	// superseded: an installed edit deleted it, and it leaves once no
	// reader holds a Version before that edit. A build does not size the
	// maplet for its entries, which are about to go.
	superseded bool
}

// treeBuild is a build in progress: the updates made since its snapshot,
// for it to replay.
type treeBuild struct {
	ops  []treeOp
	load float64 // what the new maplet is sized for
}

// treeShare records entries counted once for two covered placements in
// one run: a table a compaction deleted (giver) and one it added (heir)
// hold the same hashes, and the heir inserted none of them. Whichever
// leaves first takes none of them out; the share then ends.
//
// So the maplet holds, for each hash in a run, as many entries as the
// placements holding it less the shares covering it. Take the placements
// holding a hash as nodes and its shares as edges: a share is made when
// its heir enters, and joins the heir, which has no edge yet, to one
// older node, each hash of a heir joining one share at most; a leaving
// node takes its edges with it (takeOut keeps one back for each). So the
// edges form a forest, with fewer edges than nodes, and every hash a
// placed table holds keeps an entry. A build counts every placement in
// full and ends every share.
type treeShare struct {
	giver, heir placementKey
	// giverMarks and heirMarks mark the shared hashes by their positions
	// in each side's key-hash set (ascending and deduplicated, as the
	// block holds it, so the same on every read): a bit a hash on each
	// side rather than the hash, so that the shares an old Version pins
	// while compactions rewrite its tables cost bits, not bytes, a key.
	giverMarks, heirMarks hashMarks
}

// hashMarks is a set of positions in a table's key-hash set.
type hashMarks []uint64

func newHashMarks(n int) hashMarks { return make(hashMarks, (n+63)/64) }

func (m hashMarks) set(i int) { m[i/64] |= 1 << (i % 64) }

func (m hashMarks) has(i int) bool { return i/64 < len(m) && m[i/64]&(1<<(i%64)) != 0 }

type treeOp struct {
	key    placementKey
	enter  bool
	hashes []uint64 // nil when they could not be read
}

// treeFilterMaxCodeLen bounds the run codes: with payloadBits P, a maplet
// can double while P−1 exceeds the longest code, so short codes leave room
// to grow before a rebuild (filter.Maplet.Grow).
const treeFilterMaxCodeLen = 4

// The loads a build sizes the maplet for (its slots are any multiple of
// 64). Open's build, of a tree that may be at rest, is sized near
// filter.MapletMaxLoad, its memory least for its rate. A rebuild follows
// a doubling, in a tree that grows: sized as the doubling left it, for
// half the load it doubles at, it next doubles once the entries have
// doubled, so a growing tree pays one rebuild per doubling
// (docs/design.md, "Tree-wide filter").
const (
	treeFilterOpenLoad = 0.85
	treeFilterGrowLoad = filter.MapletMaxLoad / 2
)

// errNoKeyHashes: a table written without a key-hash block (before
// TreeWide was set): its level is always asked.
var errNoKeyHashes = errors.New("lsm: table has no key-hash block")

func newTreeFilter(hashes func([]uint64, *manifest.FileMetadata) ([]uint64, error), payloadBits uint, minSlots uint64) *treeFilter {
	return &treeFilter{hashes: hashes, payloadBits: payloadBits, minSlots: minSlots, placed: make(map[placementKey]placement), shares: make(map[placementKey][]*treeShare)}
}

// start takes the placements of the live Versions (VersionSet.
// TrackPlacements) as uncovered and builds the maplet in the background:
// until it is ready, every level is asked.
func (t *treeFilter) start(ps []manifest.Placement) {
	t.update.Lock()
	t.mu.Lock()
	for _, p := range ps {
		k := placementKey{p.Level, p.File.FileNum}
		t.placed[k] = placement{f: p.File}
		t.uncover(k.level, 1)
	}
	t.mu.Unlock()
	t.update.Unlock()
	t.rebuild()
}

// lookup returns the levels that may hold the key of hash h, and false
// when the filter cannot answer (not built): then every level is asked.
func (t *treeFilter) lookup(h uint64) (filter.RunSet, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.m == nil {
		return 0, false
	}
	var runs [1]filter.RunSet
	t.lookupLocked([]uint64{h}, []int{0}, runs[:])
	return runs[0], true
}

// lookupEach is lookup for the keys of hashes at the indexes idx, under
// one read lock: runs[i] for each i of idx.
func (t *treeFilter) lookupEach(hashes []uint64, idx []int, runs []filter.RunSet) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.m == nil {
		return false
	}
	t.lookupLocked(hashes, idx, runs)
	return true
}

// lookupLocked is lookupEach's work, with mu held and m built.
func (t *treeFilter) lookupLocked(hashes []uint64, idx []int, runs []filter.RunSet) {
	var negatives, lines uint64
	for _, i := range idx {
		set, n := t.m.LookupLines(hashes[i])
		runs[i] = treeLevels(set) | t.asked
		lines += uint64(n)
		if runs[i] == 0 {
			negatives++
		}
	}
	t.probes.Add(uint64(len(idx)))
	t.negatives.Add(negatives)
	t.lines.Add(lines)
}

// enter files the keys of tables about to be placed (an edit's Added)
// before the edit is installed. A key an added table shares with a table
// the edit deletes from the same run (a compaction rewriting its output
// level's tables, or moving keys between the levels of the upper run)
// already has its entry: the added table takes a share of it (treeShare)
// instead of a second one, so what a compaction merely rewrites or moves
// within a run costs the maplet nothing.
func (t *treeFilter) enter(added []manifest.NewFile, deleted map[manifest.DeletedFile]bool) {
	ops := make([]treeOp, len(added))
	heirs := make([]*tableHashes, len(added))
	for i, nf := range added {
		ops[i] = treeOp{key: placementKey{nf.Level, nf.Meta.FileNum}, enter: true, hashes: t.read(nf.Meta)}
		heirs[i] = &tableHashes{key: ops[i].key, f: nf.Meta, hashes: ops[i].hashes}
	}
	givers := t.readGivers(added, deleted)
	t.update.Lock()
	t.mu.Lock()
	for _, h := range heirs {
		covered := t.m != nil && h.hashes != nil
		t.placed[h.key] = placement{f: h.f, covered: covered}
		if !covered {
			t.uncover(h.key.level, 1)
		}
	}
	t.mu.Unlock()
	t.supersede(deleted, true)
	if t.m != nil && !t.fileShared(heirs, givers) {
		t.giveUp()
	}
	t.queue(ops)
	stale := t.m == nil || t.m.PayloadBits() < t.payloadBits
	t.update.Unlock()
	if stale {
		t.rebuild()
	}
}

// tableHashes is a table's key hashes while enter pairs an added table's
// with a deleted one's: paired marks the added table's hashes a share
// took. Each may join one share (the forest of treeShare); a deleted
// table's may join several, which only a collision of two keys' hashes
// would ask for.
type tableHashes struct {
	key    placementKey
	f      *manifest.FileMetadata
	hashes []uint64
	paired []bool
}

// readGivers reads the hashes of the covered tables an edit deletes from
// a run it adds tables to: those whose entries the added tables may
// share.
func (t *treeFilter) readGivers(added []manifest.NewFile, deleted map[manifest.DeletedFile]bool) []*tableHashes {
	var runs filter.RunSet
	for _, nf := range added {
		runs |= 1 << treeRun(nf.Level)
	}
	var givers []*tableHashes
	t.update.Lock()
	for df := range deleted {
		k := placementKey{df.Level, df.FileNum}
		if pl := t.placed[k]; runs.Has(k.run()) && pl.covered {
			givers = append(givers, &tableHashes{key: k, f: pl.f})
		}
	}
	t.update.Unlock()
	for _, g := range givers {
		g.hashes = t.read(g.f)
	}
	return givers
}

// fileShared files each covered heir's hashes: those a giver in its run
// holds too become a share, the rest are inserted. Only a giver whose key
// range overlaps the heir's can hold the same key, so only those are
// walked. Coverage is checked again: it may have changed since the givers
// were read. It reports false when the maplet could not take an insert.
func (t *treeFilter) fileShared(heirs, givers []*tableHashes) bool {
	var insert treeBatch
	for _, h := range heirs {
		if !t.placed[h.key].covered {
			continue
		}
		h.paired = make([]bool, len(h.hashes))
		for _, g := range givers {
			if g.key.run() == h.key.run() && g.hashes != nil && t.placed[g.key].covered && overlaps(g.f, h.f) {
				t.pair(g, h)
			}
		}
		var unpaired []uint64
		for i, hash := range h.hashes {
			if !h.paired[i] {
				unpaired = append(unpaired, hash)
			}
		}
		insert[h.key.run()] = append(insert[h.key.run()], unpaired)
	}
	return t.apply(&treeBatch{}, &insert)
}

// pair records, as one share, the hashes of h not yet paired that g
// holds.
func (t *treeFilter) pair(g, h *tableHashes) {
	var s *treeShare
	for i, j := 0, 0; i < len(h.hashes) && j < len(g.hashes); {
		switch {
		case h.paired[i] || h.hashes[i] < g.hashes[j]:
			i++
		case g.hashes[j] < h.hashes[i]:
			j++
		default:
			if s == nil {
				s = &treeShare{giver: g.key, heir: h.key, giverMarks: newHashMarks(len(g.hashes)), heirMarks: newHashMarks(len(h.hashes))}
			}
			s.giverMarks.set(j)
			s.heirMarks.set(i)
			h.paired[i] = true
			i, j = i+1, j+1
		}
	}
	if s != nil {
		t.shares[s.giver] = append(t.shares[s.giver], s)
		t.shares[s.heir] = append(t.shares[s.heir], s)
	}
}

// overlaps reports whether two tables' user-key ranges intersect.
func overlaps(a, b *manifest.FileMetadata) bool {
	return bytes.Compare(a.Smallest.UserKey, b.Largest.UserKey) <= 0 && bytes.Compare(b.Smallest.UserKey, a.Largest.UserKey) <= 0
}

// supersede marks the placements an edit deletes as superseded (or, for
// an edit not installed, no longer); update must be held.
func (t *treeFilter) supersede(deleted map[manifest.DeletedFile]bool, v bool) {
	for d := range deleted {
		k := placementKey{d.Level, d.FileNum}
		if pl, ok := t.placed[k]; ok {
			pl.superseded = v
			t.placed[k] = pl
		}
	}
}

// abandon undoes enter for an edit that was not installed: the added
// tables leave, giving their shares back, and the deleted ones stay.
func (t *treeFilter) abandon(added []manifest.NewFile, deleted map[manifest.DeletedFile]bool) {
	ps := make([]manifest.Placement, len(added))
	for i, nf := range added {
		ps[i] = manifest.Placement{Level: nf.Level, File: nf.Meta}
	}
	t.leave(ps)
	t.update.Lock()
	t.supersede(deleted, false)
	t.update.Unlock()
}

// leave removes the keys of placements no live Version holds any more.
// A placement's entries are its hashes less what its shares counted once
// for two tables: for each share, the first of its two tables to leave
// takes nothing out for the shared hashes, and the share ends, so the
// other table holds them alone.
func (t *treeFilter) leave(ps []manifest.Placement) {
	ops := make([]treeOp, len(ps))
	need := t.needHashes(ps)
	for i, p := range ps {
		ops[i].key = placementKey{p.Level, p.File.FileNum}
		if need[i] {
			ops[i].hashes = t.read(p.File)
		}
	}
	t.update.Lock()
	defer t.update.Unlock()
	var remove, insert treeBatch
	var uncovered [NumLevels]int
	for _, op := range ops {
		pl, ok := t.placed[op.key]
		if !ok {
			continue
		}
		delete(t.placed, op.key)
		shared := t.endShares(op.key)
		switch {
		case !pl.covered:
			uncovered[op.key.level]--
		case op.hashes != nil:
			out, in := takeOut(op.hashes, shared)
			remove[op.key.run()] = append(remove[op.key.run()], out)
			insert[op.key.run()] = append(insert[op.key.run()], in)
		}
		// A covered placement whose hashes cannot be read back leaves its
		// entries: extra "maybe"s until the next build.
	}
	t.mu.Lock()
	for level, delta := range uncovered {
		if delta != 0 {
			t.uncover(level, delta)
		}
	}
	t.mu.Unlock()
	if t.m != nil && !t.apply(&remove, &insert) {
		t.giveUp()
	}
	t.queue(ops)
}

// endShares ends the shares of the placement k, returning k's marks of
// each.
func (t *treeFilter) endShares(k placementKey) []hashMarks {
	var marks []hashMarks
	for _, s := range t.shares[k] {
		other, mine := s.heir, s.giverMarks
		if other == k {
			other, mine = s.giver, s.heirMarks
		}
		t.shares[other] = slices.DeleteFunc(t.shares[other], func(o *treeShare) bool { return o == s })
		if len(t.shares[other]) == 0 {
			delete(t.shares, other)
		}
		marks = append(marks, mine)
	}
	delete(t.shares, k)
	return marks
}

// takeOut splits a leaving placement's hashes into the entries to remove
// and those to insert: each hash once out, less one for each share that
// marks it. A hash two shares mark (the placement in the middle of a
// chain of compactions) is inserted, so that the tables still sharing it
// keep an entry.
func takeOut(hashes []uint64, shared []hashMarks) (remove, insert []uint64) {
	if len(shared) == 0 {
		return hashes, nil
	}
	for i, h := range hashes {
		n := 0
		for _, m := range shared {
			if m.has(i) {
				n++
			}
		}
		if n == 0 {
			remove = append(remove, h)
		}
		for ; n > 1; n-- {
			insert = append(insert, h)
		}
	}
	return remove, insert
}

// treeBatch gathers a filing's updates by run, to apply each run's in
// hash order, in which each lands near the last in the maplet (filter
// BenchmarkMaplet, MoveHashOrder against Move).
type treeBatch [NumLevels][][]uint64

// apply inserts insert's entries and removes remove's, run by run,
// in hash order; false when the maplet could not take an insert. Inserts
// go first: a batch may insert and remove one hash (one leaving table
// gives back an entry another takes out), and removing first could find
// the count at zero, remove nothing, and leave the insert behind.
//
// It holds mu for writing for treeApplyChunk entries at a time, so
// readers probe between the chunks: an entry filed before the tables
// holding it are installed, or removed after the last Version holding
// them is gone, changes no live Version's answer, so every state between
// two chunks keeps the superset rule. update must be held.
func (t *treeFilter) apply(remove, insert *treeBatch) bool {
	for run := range NumLevels {
		for hs := mergeAll(insert[run]); len(hs) > 0; {
			n := min(len(hs), treeApplyChunk)
			t.makeRoom(n)
			t.mu.Lock()
			for _, h := range hs[:n] {
				if t.m.Insert(h, run) != nil {
					t.mu.Unlock()
					return false
				}
			}
			t.mu.Unlock()
			hs = hs[n:]
		}
		for hs := mergeAll(remove[run]); len(hs) > 0; {
			n := min(len(hs), treeApplyChunk)
			t.mu.Lock()
			for _, h := range hs[:n] {
				t.m.Remove(h, run)
			}
			t.mu.Unlock()
			hs = hs[n:]
		}
	}
	return true
}

// treeApplyChunk bounds the updates apply makes per hold of mu: some
// 4096 × 150 ns, half a millisecond, for a reader to wait at most. A
// variable for the tests, which make it tiny.
var treeApplyChunk = 4096

// makeRoom doubles the maplet, if n more entries would pass
// filter.MapletMaxLoad and it can, into a copy made while readers go on
// probing the old one (filter.Maplet.Grown), then swaps the two: Insert
// would double it in place, holding every reader for the pass over
// every slot. update must be held.
func (t *treeFilter) makeRoom(n int) {
	if float64(t.m.Len()+n) <= filter.MapletMaxLoad*float64(t.m.Slots()) {
		return
	}
	g, err := t.m.Grown()
	if err != nil {
		return // full for good: Insert reports it
	}
	if treeFilterBeforeSwap != nil {
		treeFilterBeforeSwap(t)
	}
	t.mu.Lock()
	old := t.m
	t.m = g
	t.mu.Unlock()
	old.Release()
}

// treeFilterBeforeSwap, if set, runs when a doubling (makeRoom) or a
// build (runBuild) has its new maplet ready, before swapping it in: a
// test's look at the locks then.
var treeFilterBeforeSwap func(*treeFilter)

// mergeHashes merges two ascending lists; given an empty one, it returns
// the other.
func mergeHashes(a, b []uint64) []uint64 {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]uint64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0] < a[0] {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// mergeAll merges ascending lists into one, pairwise.
func mergeAll(lists [][]uint64) []uint64 {
	for len(lists) > 1 {
		next := lists[:0]
		for i := 0; i < len(lists); i += 2 {
			if i+1 == len(lists) {
				next = append(next, lists[i])
				break
			}
			next = append(next, mergeHashes(lists[i], lists[i+1]))
		}
		lists = next
	}
	if len(lists) == 0 {
		return nil
	}
	return lists[0]
}

// needHashes reports, for each leaving placement, whether its hashes will
// be used: to remove its entries, or for a build to replay. Coverage can
// change before leave takes the lock; a placement covered meanwhile keeps
// its entries, extra "maybe"s until the next build.
func (t *treeFilter) needHashes(ps []manifest.Placement) []bool {
	t.update.Lock()
	defer t.update.Unlock()
	need := make([]bool, len(ps))
	for i, p := range ps {
		need[i] = t.placed[placementKey{p.Level, p.File.FileNum}].covered || t.build != nil
	}
	return need
}

// read returns f's key hashes, nil when they cannot be had.
func (t *treeFilter) read(f *manifest.FileMetadata) []uint64 {
	hs, err := t.hashes(nil, f)
	if err != nil {
		return nil
	}
	return hs
}

// insertAll adds op's keys to m; false when m could not take them all.
func insertAll(m *filter.Maplet, op treeOp) bool {
	for _, h := range op.hashes {
		if m.Insert(h, op.key.run()) != nil {
			return false
		}
	}
	return true
}

// giveUp drops a maplet that missed an insert: it may lack keys, so no
// lookup may use it. Every placement becomes uncovered until a build
// (enter starts one). update must be held.
func (t *treeFilter) giveUp() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m.Release()
	t.m = nil
	clear(t.shares)
	for k, pl := range t.placed {
		if pl.covered {
			pl.covered = false
			t.placed[k] = pl
			t.uncover(k.level, 1)
		}
	}
}

// uncover counts delta placements at level as not in the maplet; update
// and mu must be held.
func (t *treeFilter) uncover(level, delta int) {
	t.uncovered[level] += delta
	if t.uncovered[level] > 0 {
		t.asked |= 1 << level
	} else {
		t.asked &^= 1 << level
	}
}

// queue hands ops to the build running, if any.
func (t *treeFilter) queue(ops []treeOp) {
	if t.build != nil {
		t.build.ops = append(t.build.ops, ops...)
	}
}

// rebuild builds a maplet from the hash blocks of every placed table and
// swaps it in, in the background; a build already running is enough.
func (t *treeFilter) rebuild() {
	t.update.Lock()
	defer t.update.Unlock()
	if t.build != nil || t.closed {
		return
	}
	b := &treeBuild{load: treeFilterGrowLoad}
	if t.m == nil {
		b.load = treeFilterOpenLoad
	}
	t.build = b
	snapshot := make(map[placementKey]placement, len(t.placed))
	for k, pl := range t.placed {
		snapshot[k] = pl
	}
	t.builds.Add(1)
	go func() {
		defer t.builds.Done()
		t.runBuild(b, snapshot)
	}()
}

// runBuild reads the snapshot's hashes, builds the maplet, replays what
// happened meanwhile, and swaps it in.
func (t *treeFilter) runBuild(b *treeBuild, snapshot map[placementKey]placement) {
	// A table holds at most a hash an entry: sized so, the lists never
	// grow and are never copied.
	var most uint64
	for _, pl := range snapshot {
		most += pl.f.NumEntries
	}
	hashes, runs := make([]uint64, 0, most), make([]uint8, 0, most)
	var entries [NumLevels]float64
	lasting := 0 // entries of placements not superseded
	covered := make(map[placementKey]bool, len(snapshot))
	for k, pl := range snapshot {
		n := len(hashes)
		var err error
		if hashes, err = t.hashes(hashes, pl.f); err != nil {
			continue
		}
		covered[k] = true
		for range hashes[n:] {
			runs = append(runs, uint8(k.run()))
		}
		entries[k.run()] += float64(len(hashes) - n)
		if !pl.superseded {
			lasting += len(hashes) - n
		}
	}
	m, err := t.newMaplet(hashes, runs, entries, b.load, lasting)
	t.update.Lock()
	defer t.update.Unlock()
	t.build = nil
	if err != nil || t.closed {
		if m != nil {
			m.Release()
		}
		return
	}
	for _, op := range b.ops {
		switch {
		case op.enter && op.hashes != nil:
			if !insertAll(m, op) {
				m.Release()
				return // the next enter that finds the maplet grown tries again
			}
			covered[op.key] = true
		case !op.enter && covered[op.key]:
			delete(covered, op.key)
			for _, h := range op.hashes {
				m.Remove(h, op.key.run())
			}
		}
	}
	if treeFilterBeforeSwap != nil {
		treeFilterBeforeSwap(t)
	}
	t.mu.Lock()
	old := t.m
	t.m = m
	t.uncovered, t.asked = [NumLevels]int{}, 0
	for k, pl := range t.placed {
		pl.covered = covered[k]
		t.placed[k] = pl
		if !covered[k] {
			t.uncover(k.level, 1)
		}
	}
	t.mu.Unlock()
	if old != nil {
		old.Release()
	}
	clear(t.shares)
	t.built.Add(1)
}

// newMaplet builds a maplet of the entries, sized for the lasting ones
// (those of placements not superseded) at the given load, at least
// minSlots, and room for all of them below filter.MapletMaxLoad. Its run
// codes are fitted to each run's share (entries, by run id). Every run
// gets a code, one holding nothing the longest.
func (t *treeFilter) newMaplet(hashes []uint64, runs []uint8, entries [NumLevels]float64, load float64, lasting int) (*filter.Maplet, error) {
	slots := max(filter.MapletSlots(lasting, load), filter.MapletSlots(len(hashes), filter.MapletMaxLoad), t.minSlots)
	total := float64(len(hashes))
	var ids []int
	var weights []float64
	for run := range NumLevels {
		if treeRunLevels[run] != 0 {
			ids = append(ids, run)
			weights = append(weights, max(entries[run], total/1000, 1))
		}
	}
	lens := make([]uint8, NumLevels) // 0: no code, for the ids no run has
	for i, n := range filter.RunCodeLengths(weights, treeFilterMaxCodeLen) {
		lens[ids[i]] = n
	}
	return filter.BuildMaplet(slots, t.payloadBits, lens, hashes, runs)
}

// close stops the builds and gives the maplet's memory back.
func (t *treeFilter) close() {
	t.update.Lock()
	t.closed = true
	t.update.Unlock()
	t.builds.Wait()
	t.update.Lock()
	defer t.update.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m != nil {
		t.m.Release()
		t.m = nil
	}
}

// size returns the maplet's memory and entries, 0 when there is none.
func (t *treeFilter) size() (bytes, entries uint64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.m == nil {
		return 0, 0
	}
	return uint64(t.m.SizeBytes()), uint64(t.m.Len())
}

// rulesOut reports whether the tree-wide filter, asked once per lookup
// (treeLookup), proved that no table of level holds the key.
func (a treeAnswer) rulesOut(level int) bool { return a.ok && !a.runs.Has(level) }

// treeAnswer is the tree-wide filter's answer for one key: the levels
// that may hold it, when ok.
type treeAnswer struct {
	runs filter.RunSet
	ok   bool
}

// treeLookup asks the tree-wide filter about the key of hash h; the
// answer rules nothing out under PerTable, before the filter is built, or
// when filters are ignored.
func (d *DB) treeLookup(h uint64) treeAnswer {
	if d.tree == nil || d.opts.IgnoreFilters {
		return treeAnswer{}
	}
	runs, ok := d.tree.lookup(h)
	return treeAnswer{runs, ok}
}

// treeFilterPayloadBits is the payload a build gives each slot: a run's
// code and the fingerprint after it. At the load Open builds for, 8 bits
// is the width at which the maplet needs no more memory than per-table
// Bloom filters for its false-positive rate (docs/design.md, "Memory at
// the same rate").
const treeFilterPayloadBits = 8

// treeFilterMinSlots is the smallest table a build makes, 2^16 slots
// (88 KiB at 8 payload bits: 11 bits a slot); a variable for the tests.
var treeFilterMinSlots uint64 = 1 << 16

// startTreeFilter starts the tree-wide filter, if Options ask for it, from
// the placements of the Versions now live; the flushes and compactions to
// come must not have started.
func (d *DB) startTreeFilter() {
	if d.opts.FilterScope != TreeWide {
		return
	}
	d.recentHashes = newRecentKeyHashes()
	d.tree = newTreeFilter(d.tableKeyHashes, treeFilterPayloadBits, treeFilterMinSlots)
	d.tree.start(d.vs.TrackPlacements())
}

// tableKeyHashes appends f's key hashes to dst: those its writer handed
// over, if they are still kept (recentKeyHashes), else read from its
// key-hash block through the table cache. A
// block that cannot be read only leaves the table's level always asked,
// so the error is logged, not returned to any caller of the DB: the read
// that needs the table reports the damage.
func (d *DB) tableKeyHashes(dst []uint64, f *manifest.FileMetadata) ([]uint64, error) {
	if dst, ok := d.recentHashes.appendTo(dst, f.FileNum); ok {
		return dst, nil
	}
	r, release, err := d.table(f)
	if err != nil {
		return dst, err
	}
	defer release()
	if !r.HasKeyHashes() {
		return dst, errNoKeyHashes
	}
	hs, err := r.AppendKeyHashes(dst)
	if err != nil {
		d.opts.Logger.Warn("monban: the tree-wide filter cannot read a table's key hashes; its level is always asked", "table", f.FileNum, "err", err)
	}
	return hs, err
}
