package vfs

// chunkSize bounds the copying a MemFS write does: a file is a list of
// chunks, so appending never moves bytes already written (one flat slice
// grown by append copied each byte about five times over: 53 MB/s against
// the OS's 330 MB/s for 4 KiB writes, measured by BenchmarkWrite).
const chunkSize = 64 << 10

// fileData is a MemFS file's contents. Every chunk but the last holds
// exactly chunkSize bytes. Invariant: a byte below size never changes —
// writes only append — so a reader holding (fileData, n) for n <= size
// keeps seeing the same n bytes however much is appended after it. That is
// what lets Sync record a length instead of copying.
type fileData struct {
	chunks [][]byte
	size   int64
}

// append adds p at the end.
func (d *fileData) append(p []byte) {
	for len(p) > 0 {
		last := len(d.chunks) - 1
		if last < 0 || len(d.chunks[last]) == chunkSize {
			// The first chunk starts empty and grows by append, which keeps
			// tiny files tiny; a file that fills it is not tiny.
			var c []byte
			if last >= 0 {
				c = make([]byte, 0, chunkSize)
			}
			d.chunks = append(d.chunks, c)
			last++
		}
		take := min(len(p), chunkSize-len(d.chunks[last]))
		d.chunks[last] = append(d.chunks[last], p[:take]...)
		d.size += int64(take)
		p = p[take:]
	}
}

// readAt copies into p the bytes from off (0 <= off) up to limit, the
// file's length as this reader sees it, and returns how many it copied.
func (d *fileData) readAt(p []byte, off, limit int64) int {
	n := 0
	for n < len(p) && off < limit {
		c := d.chunks[off/chunkSize][off%chunkSize:]
		c = c[:min(int64(len(c)), limit-off)]
		k := copy(p[n:], c)
		n += k
		off += int64(k)
	}
	return n
}

// prefix returns a new fileData holding the first n bytes of d and sharing
// no array that either side will append to: full chunks are never written
// again and are shared; a partial last chunk is copied.
func (d *fileData) prefix(n int64) *fileData {
	p := &fileData{size: n}
	full := int(n / chunkSize)
	p.chunks = make([][]byte, full, full+1)
	copy(p.chunks, d.chunks[:full])
	if rest := n % chunkSize; rest > 0 {
		last := make([]byte, rest, chunkSize)
		copy(last, d.chunks[full])
		p.chunks = append(p.chunks, last)
	}
	return p
}
