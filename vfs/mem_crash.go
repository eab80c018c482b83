package vfs

import "slices"

// CrashClone returns a new MemFS holding only what a machine crash would
// leave of m at this instant, m itself unchanged:
//
//   - a name exists only if it was in its directory at that directory's
//     last SyncDir (the root always exists);
//   - a file holds exactly the bytes it had at its last Sync, or nothing if
//     it was never synced — unsynced appends, stores into a window and
//     truncations are lost, and so a reserved length synced comes back as
//     zeros; a reused file not synced since Reuse holds what its old life
//     last synced, and one synced since holds the new bytes over the old;
//   - no lock is held and no file is open.
//
// This is the strictest outcome POSIX allows, not the kindest one a real
// file system often gives (ext4 usually keeps a new name once its file is
// fsynced); a DB that survives it survives both. CrashCloneKeeping gives
// the outcomes between.
func (m *MemFS) CrashClone() *MemFS {
	return m.CrashCloneKeeping(func(int) bool { return false })
}

// CrashCloneKeeping is CrashClone for a crash that also kept some of the
// directory changes no SyncDir made durable — a name created or removed,
// a rename — whichever keep says: keep(i) for the i-th change m recorded,
// counting from 0 in the order they were made (DirChanges counts them).
// A directory's kept changes apply over its durable entries in that
// order, so a name ends as the last one kept left it: the changes of one
// directory may be kept out of order, since only SyncDir orders them. A
// rename is one change, kept whole or not at all (its two names at once,
// where a SyncDir has not made its side of it durable already), as a
// journaling file system commits it; POSIX promises less, and a file
// system without a journal may keep both names, or neither. Files hold
// what they last synced, as in CrashClone. keep is asked only of the
// changes a SyncDir has not made durable, once each, in the order made,
// so a keep drawing from a seeded source picks the same ones again; it
// runs under m's lock and must not call m.
func (m *MemFS) CrashCloneKeeping(keep func(i int) bool) *MemFS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var numbers []int
	for d := range m.unsynced {
		for _, c := range d.pending {
			numbers = append(numbers, c.i)
		}
	}
	slices.Sort(numbers)
	kept := map[int]bool{}
	for _, i := range slices.Compact(numbers) {
		kept[i] = keep(i)
	}
	seen := map[*memNode]*memNode{}
	return &MemFS{root: crashCopy(m.root, seen, kept), locks: map[string]bool{}}
}

// DirChanges returns the number of directory changes m has recorded: the
// next one is change DirChanges() for CrashCloneKeeping.
func (m *MemFS) DirChanges() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.changes
}

// crashCopy copies the durable state of n, with the directory changes
// kept. seen keeps an inode reachable from two names (a rename kept or
// synced in only one of its two directories) one inode, and ends the walk
// on a cycle of entries.
func crashCopy(n *memNode, seen map[*memNode]*memNode, kept map[int]bool) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	if !n.dir {
		im := n.durableImage()
		c := &memNode{data: im.d, length: im.end, synced: im.d, syncedSize: im.size, syncedLength: im.end}
		seen[n] = c
		return c
	}
	c := newDirNode()
	seen[n] = c
	entries := make(map[string]*memNode, len(n.durable))
	for name, child := range n.durable {
		entries[name] = child
	}
	for _, ch := range n.pending {
		switch {
		case !kept[ch.i]:
		case ch.n == nil:
			delete(entries, ch.name)
		default:
			entries[ch.name] = ch.n
		}
	}
	for name, child := range entries {
		cc := crashCopy(child, seen, kept)
		c.live[name] = cc
		c.durable[name] = cc
	}
	return c
}

// ProcessCrashClone returns a new MemFS holding what a process crash (a
// kill -9) would leave of m at this instant, m itself unchanged: every
// name and every byte written, as the kernel has them, while what is
// durable stays as it is in m, so a later CrashClone of the clone loses
// what one of m would, and a CrashCloneKeeping of it may keep what one of
// m may (the clone has m's directory changes, counted the same). No lock
// is held and no file is open.
func (m *MemFS) ProcessCrashClone() *MemFS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[*memNode]*memNode{}
	c := &MemFS{root: liveCopy(m.root, seen), locks: map[string]bool{}, changes: m.changes, unsynced: map[*memNode]bool{}}
	for d := range m.unsynced {
		cd := liveCopy(d, seen)
		cd.pending = make([]entryChange, len(d.pending))
		for i, ch := range d.pending {
			cd.pending[i] = entryChange{i: ch.i, name: ch.name}
			if ch.n != nil {
				cd.pending[i].n = liveCopy(ch.n, seen)
			}
		}
		c.unsynced[cd] = true
	}
	return c
}

// liveCopy copies n as it is, written and durable state both; seen keeps
// an inode with several names one inode. A reused file's layers become one
// (image): no file of the clone is open to write over them.
func liveCopy(n *memNode, seen map[*memNode]*memNode) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	if !n.dir {
		live, dur := n.liveImage(), n.durableImage()
		c := &memNode{
			data: live.d, length: live.end,
			synced: dur.d, syncedSize: dur.size, syncedLength: dur.end,
		}
		seen[n] = c
		return c
	}
	c := newDirNode()
	seen[n] = c
	for name, child := range n.live {
		c.live[name] = liveCopy(child, seen)
	}
	for name, child := range n.durable {
		c.durable[name] = liveCopy(child, seen)
	}
	return c
}
