package vfs

import (
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory file system that remembers what is durable, so
// that CrashClone can show what a machine crash would leave (mem_crash.go).
// It has one root: "/a/b", "a/b" and "./a/b" name the same file. It is safe
// for concurrent use; one mutex guards everything, which is plenty for
// tests and keeps the durability rules easy to check.
type MemFS struct {
	mu    sync.RWMutex
	root  *memNode
	locks map[string]bool // held locks by cleaned path; a crash drops them
	// changes counts the changes made to directories' entries: the next
	// one's number. unsynced holds the directories with changes no SyncDir
	// has made durable (memNode.pending), what CrashCloneKeeping may keep.
	changes  int
	unsynced map[*memNode]bool
}

// entryChange is a change to a directory's entries: name now reaches n,
// or nothing when n is nil. i numbers it among all of the MemFS's; the
// two sides of a rename share one, so that a crash keeps both or neither,
// as a journaling file system commits a rename.
type entryChange struct {
	i    int
	name string
	n    *memNode
}

// setEntry makes name in dir reach n (nil: removes it) and records the
// change. Callers hold m.mu for writing.
func (m *MemFS) setEntry(dir *memNode, name string, n *memNode) {
	m.record(dir, name, n)
	m.changes++
}

// record makes name in dir reach n (nil: removes it) as change number
// m.changes, pending until dir's next SyncDir.
func (m *MemFS) record(dir *memNode, name string, n *memNode) {
	if n == nil {
		delete(dir.live, name)
	} else {
		dir.live[name] = n
	}
	dir.pending = append(dir.pending, entryChange{m.changes, name, n})
	if m.unsynced == nil {
		m.unsynced = map[*memNode]bool{}
	}
	m.unsynced[dir] = true
}

var _ FS = (*MemFS)(nil)

// memNode is an inode: a file or a directory. Several names (or none, once
// removed) may reach it, as on POSIX.
type memNode struct {
	dir bool

	// A file. data is everything written since Create or Reuse began the
	// file's life: what reads see from offset 0. Past it they see under's
	// bytes, a reused file's old contents (mem_reuse.go; empty otherwise),
	// then zeros up to length if length is larger: the space a Map
	// reserved and nothing has been stored in yet (mem_map.go). The durable
	// contents are layered the same way: the first syncedSize bytes of
	// synced, which is data as of the last Sync, then syncedUnder, then
	// zeros up to syncedLength. By fileData's invariant those bytes never
	// change, and Create and Truncate give data a new fileData rather than
	// cutting this one; nothing writes an image.
	data         *fileData
	length       int64
	under        fileImage
	synced       *fileData
	syncedSize   int64
	syncedLength int64
	syncedUnder  fileImage

	// A directory. live is what List and lookups see; durable is live as of
	// the last SyncDir. Both map a name to the inode it reaches. pending
	// is the changes since, in order: what a crash may or may not keep.
	live, durable map[string]*memNode
	pending       []entryChange
}

func newDirNode() *memNode {
	return &memNode{dir: true, live: map[string]*memNode{}, durable: map[string]*memNode{}}
}

func newFileNode() *memNode {
	d := &fileData{}
	return &memNode{data: d, synced: d}
}

// size is the file's length: the bytes written, then any old bytes and
// reserved zeros.
func (n *memNode) size() int64 { return max(n.data.size, n.under.end, n.length) }

// readAt copies into p the file's bytes from off (0 <= off < n.size()),
// old bytes and zeros past data included, and returns how many it copied.
func (n *memNode) readAt(p []byte, off int64) int {
	end := min(off+int64(len(p)), n.size())
	k := 0
	if off < n.data.size {
		k = n.data.readAt(p, off, n.data.size)
	}
	if at := off + int64(k); at < n.under.size {
		k += n.under.d.readAt(p[k:], at, n.under.size)
	}
	total := int(end - off)
	clear(p[k:total])
	return total
}

// NewMem returns an empty in-memory file system whose root directory
// exists (and is durable).
func NewMem() *MemFS {
	return &MemFS{root: newDirNode(), locks: map[string]bool{}}
}

// split turns a name into path components below the root.
func split(name string) []string {
	clean := filepath.ToSlash(filepath.Clean(name))
	var parts []string
	for _, p := range strings.Split(clean, "/") {
		if p != "" && p != "." && p != ".." { // ".." at the root is the root
			parts = append(parts, p)
		}
	}
	return parts
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// walk returns the directory reached by parts. Callers hold m.mu.
func (m *MemFS) walk(op, name string, parts []string) (*memNode, error) {
	n := m.root
	for _, p := range parts {
		c, ok := n.live[p]
		if !ok {
			return nil, pathErr(op, name, fs.ErrNotExist)
		}
		if !c.dir {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		n = c
	}
	return n, nil
}

// parent returns the directory holding name and name's last component.
// Callers hold m.mu.
func (m *MemFS) parent(op, name string) (*memNode, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", pathErr(op, name, fs.ErrInvalid) // the root itself
	}
	dir, err := m.walk(op, name, parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	return dir, parts[len(parts)-1], nil
}

// Create creates name, truncating it if it exists. As with O_TRUNC the
// inode stays the same: until the next Sync, a crash brings back the
// contents it had at its last Sync.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("create", name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.live[base]
	switch {
	case ok && n.dir:
		return nil, pathErr("create", name, syscall.EISDIR)
	case ok:
		// The durable contents stay: a crash before the next Sync brings them back.
		n.data, n.length, n.under = &fileData{}, 0, fileImage{}
	default:
		n = newFileNode()
		m.setEntry(dir, base, n)
	}
	return &memFile{fs: m, n: n, name: name, writable: true}, nil
}

// Open opens an existing file for reading.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	dir, base, err := m.parent("open", name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.live[base]
	if !ok {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	if n.dir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	return &memFile{fs: m, n: n, name: name}, nil
}

// Rename moves oldname's inode to newname, replacing what newname named.
// Like rename(2), a directory may only replace an empty directory and
// never move below itself, and a rename between two names of one file
// (which only a crash clone can have: MemFS makes no links) does nothing.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.rename("rename", oldname, newname, false)
	return err
}

// rename is Rename, and returns the inode moved. With fileOnly it refuses
// a directory, as Reuse must. Callers hold m.mu.
func (m *MemFS) rename(op, oldname, newname string, fileOnly bool) (*memNode, error) {
	odir, obase, err := m.parent(op, oldname)
	if err != nil {
		return nil, err
	}
	ndir, nbase, err := m.parent(op, newname)
	if err != nil {
		return nil, err
	}
	n, ok := odir.live[obase]
	switch {
	case !ok:
		return nil, pathErr(op, oldname, fs.ErrNotExist)
	case fileOnly && n.dir:
		return nil, pathErr(op, oldname, syscall.EISDIR)
	case odir == ndir && obase == nbase, ndir.live[nbase] == n:
		// The same name, or two names of one file (which a crash can
		// leave): rename(2) does nothing.
		return n, nil
	}
	if t, ok := ndir.live[nbase]; ok {
		switch {
		case t.dir && !n.dir:
			return nil, pathErr(op, newname, syscall.EISDIR)
		case !t.dir && n.dir:
			return nil, pathErr(op, newname, syscall.ENOTDIR)
		case t.dir && len(t.live) > 0:
			return nil, pathErr(op, newname, syscall.ENOTEMPTY)
		}
	}
	if n.dir && m.below(n, split(newname)) {
		return nil, pathErr(op, newname, syscall.EINVAL)
	}
	m.record(odir, obase, nil)
	m.record(ndir, nbase, n)
	m.changes++
	return n, nil
}

// below reports whether the path parts pass through directory n.
func (m *MemFS) below(n *memNode, parts []string) bool {
	d := m.root
	for _, p := range parts {
		if d = d.live[p]; d == nil {
			return false
		}
		if d == n {
			return true
		}
	}
	return false
}

// Remove unlinks a file or an empty directory. Open files keep their inode.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("remove", name)
	if err != nil {
		return err
	}
	n, ok := dir.live[base]
	if !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if n.dir && len(n.live) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	m.setEntry(dir, base, nil)
	return nil
}

// List returns the sorted names in dir.
func (m *MemFS) List(dir string) ([]string, error) {
	entries, err := m.readDir(dir)
	return names(entries), err
}

func (m *MemFS) readDir(dir string) ([]Entry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, err := m.walk("list", dir, split(dir))
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(d.live))
	for name, n := range d.live {
		entries = append(entries, Entry{Name: name, Dir: n.dir})
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// MkdirAll creates dir and any missing parents. Each new directory is an
// entry of its parent, durable only once the parent is synced.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.root
	for _, p := range split(dir) {
		c, ok := d.live[p]
		switch {
		case !ok:
			c = newDirNode()
			m.setEntry(d, p, c)
		case !c.dir:
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		d = c
	}
	return nil
}

// SyncDir makes dir's current entries durable: what CrashClone keeps.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.walk("syncdir", dir, split(dir))
	if err != nil {
		return err
	}
	d.durable = make(map[string]*memNode, len(d.live))
	for name, n := range d.live {
		d.durable[name] = n
	}
	d.pending = nil
	delete(m.unsynced, d)
	return nil
}

// Lock takes name in an in-memory lock table, creating the file if it is
// missing (without truncating it, as the OS Lock does). MemFS has no
// permissions, so every caller is one the OS Lock would let in
// (invariant 3): there is no read-only case to tell apart.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent("lock", name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.live[base]
	switch {
	case ok && n.dir:
		return nil, pathErr("lock", name, syscall.EISDIR)
	case !ok:
		m.setEntry(dir, base, newFileNode())
	}
	key := strings.Join(split(name), "/")
	if m.locks[key] {
		return nil, pathErr("lock", name, ErrLocked)
	}
	m.locks[key] = true
	return &memLock{fs: m, key: key, name: name}, nil
}

type memLock struct {
	fs        *MemFS
	key, name string
	closed    bool
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.closed {
		return pathErr("unlock", l.name, fs.ErrClosed)
	}
	l.closed = true
	delete(l.fs.locks, l.key)
	return nil
}
