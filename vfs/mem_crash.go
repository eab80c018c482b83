package vfs

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
// fsynced); a DB that survives it survives both.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[*memNode]*memNode{}
	return &MemFS{root: crashCopy(m.root, seen), locks: map[string]bool{}}
}

// crashCopy copies the durable state of n. seen keeps an inode reachable
// from two durable names (a rename synced in only one of its two
// directories) one inode, and ends the walk on a cycle of durable entries.
func crashCopy(n *memNode, seen map[*memNode]*memNode) *memNode {
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
	for name, child := range n.durable {
		cc := crashCopy(child, seen)
		c.live[name] = cc
		c.durable[name] = cc
	}
	return c
}

// ProcessCrashClone returns a new MemFS holding what a process crash (a
// kill -9) would leave of m at this instant, m itself unchanged: every
// name and every byte written, as the kernel has them, while what is
// durable stays as it is in m, so a later CrashClone of the clone loses
// what one of m would. No lock is held and no file is open.
func (m *MemFS) ProcessCrashClone() *MemFS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[*memNode]*memNode{}
	return &MemFS{root: liveCopy(m.root, seen), locks: map[string]bool{}}
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
