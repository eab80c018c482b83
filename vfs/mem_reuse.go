package vfs

// A reused file overwrites its old contents from offset 0, but fileData
// only appends (its invariant is what lets Sync record a length). So Reuse
// starts the inode's data afresh and freezes what it held into an image
// shown beneath: reads see data, then the old bytes past it (under), then
// zeros; a crash sees the synced data over the old durable contents
// (syncedUnder). Writes fill gaps below them from the image (fill), so the
// bytes a reader sees never change except where written.

var _ Reuser = (*MemFS)(nil)

// fileImage is a file's contents frozen: the first size bytes of d, then
// zeros up to end (end >= size). By fileData's invariant they never
// change, however much is appended to d.
type fileImage struct {
	d         *fileData
	size, end int64
}

// cut is the image truncated to n bytes.
func (im fileImage) cut(n int64) fileImage {
	return fileImage{im.d, min(im.size, n), min(im.end, n)}
}

// image freezes a layered view — the first size bytes of top, then u's
// bytes past them, then zeros up to the longest of size, u.end and
// length — into one image, so that reusing a reused file adds no layer.
func image(top *fileData, size, length int64, u fileImage) fileImage {
	return fileImage{d: overlay(top, size, u), size: max(size, u.size), end: max(size, u.end, length)}
}

// overlay returns a new fileData holding top's first n bytes, then u's
// bytes past them. Chunks wholly inside one of the two are full and never
// written again, so they are shared; only the chunks where top ends and u
// ends are copied.
func overlay(top *fileData, n int64, u fileImage) *fileData {
	if u.size <= n {
		return top.prefix(n)
	}
	d := top.prefix(n - n%chunkSize)
	for d.size < u.size { // d.size is a multiple of chunkSize here
		at := d.size
		if at >= n && at+chunkSize <= u.size {
			d.chunks = append(d.chunks, u.d.chunks[at/chunkSize])
			d.size += chunkSize
			continue
		}
		c := make([]byte, min(chunkSize, u.size-at))
		k := 0
		if at < n {
			k = top.readAt(c, at, n)
		}
		u.d.readAt(c[k:], at+int64(k), u.size)
		d.append(c)
	}
	return d
}

// liveImage freezes what reads see; durableImage what a crash leaves.
func (n *memNode) liveImage() fileImage {
	return image(n.data, n.data.size, n.length, n.under)
}

func (n *memNode) durableImage() fileImage {
	return image(n.synced, n.syncedSize, n.syncedLength, n.syncedUnder)
}

// fill appends to data what the file shows in [data.size, at): a reused
// file's old bytes where it has them, zeros past them. Callers hold the
// MemFS's mu.
func (n *memNode) fill(at int64) {
	if from, to := n.data.size, min(at, n.under.size); from < to {
		b := make([]byte, to-from)
		n.under.d.readAt(b, from, to)
		n.data.append(b)
	}
	if gap := at - n.data.size; gap > 0 {
		n.data.append(make([]byte, gap))
	}
}

// Reuse renames oldname to newname and begins a new life of its inode:
// data starts empty, the old contents go beneath it, and synced starts
// empty over the old durable contents, so a crash before the next Sync
// shows exactly what it showed before Reuse. The inode stays the same, as
// on the OS: files open on it read the new bytes over the old.
func (m *MemFS) Reuse(oldname, newname string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.rename("reuse", oldname, newname, true)
	if err != nil {
		return nil, err
	}
	n.under, n.syncedUnder = n.liveImage(), n.durableImage()
	n.data, n.length = &fileData{}, 0
	n.synced, n.syncedSize, n.syncedLength = n.data, 0, 0
	return &memFile{fs: m, n: n, name: newname, writable: true}, nil
}
