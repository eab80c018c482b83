package sstable

import (
	"github.com/monbandb/monban/internal/cache"
)

// Readahead. An iterator moving forward reads a table's data blocks one
// after another, and each read from the file is a pread of about 4 KiB
// that the page cache answers: on this project's 2-core VM such a pread
// costs about 3 µs, a 64 KiB one 14-24 µs, 1-1.5 µs per 4 KiB. So once
// an iterator has loaded two consecutive blocks, the next block it must
// read from the file comes with the blocks after it, in one read into a
// window, and each is copied from the window into a block-cache buffer,
// as its own read would have put it there. The first window is
// readaheadMin, so that a short scan crossing one block boundary reads
// little past its end, and the next ones readaheadMax: larger windows
// read no faster and further past a scan's end (docs/design.md, "Reads
// without garbage"). The window is a block buffer (internal/cache),
// outside the heap and pooled, so a scan allocates nothing for it.
//
// A seek elsewhere or a step back ends the run: the next read from the
// file is a single block again, unless the window already holds it. The
// window reads only data blocks (the data section ends at dataEnd), and
// never a block longer than the window, which is read alone.
//
// Compactions read their inputs the same way: a Reader from WithFile has
// no block cache, so every block comes from the file, in windows.
const (
	readaheadMin = 16 << 10
	readaheadMax = 32 << 10
)

// readahead is one iterator's window and the run of consecutive blocks
// that decides when to fill it. Not safe for concurrent use.
type readahead struct {
	mem  cache.Handle // readaheadMax bytes, once a window is read
	buf  []byte       // the window: the file's bytes [off, off+len(buf))
	off  uint64
	size int // the next window's length
	next int // the block that continues the run
	run  int // consecutive blocks loaded, ending with next-1
}

// loaded records that the iterator loaded data block i, from anywhere.
func (ra *readahead) loaded(i int) {
	if ra.run > 0 && i == ra.next {
		ra.run++
	} else {
		ra.run, ra.size = 1, readaheadMin
	}
	ra.next = i + 1
}

// read returns data block i at h as Reader.readBlock does, from the
// window: refilled from h when the window misses the block and the block
// continues a run, else read alone. REQUIRES: loaded(i) was called.
func (ra *readahead) read(r *Reader, i int, h handle) (cache.Handle, error) {
	n := int(h.length) + blockTrailerLen
	if !ra.holds(h.offset, n) {
		if ra.run < 2 || n > readaheadMax {
			return r.readBlock(h)
		}
		if err := ra.fill(r, h.offset, n); err != nil {
			return cache.Handle{}, err
		}
	}
	raw := cache.Alloc(n)
	copy(raw.Block(), ra.buf[h.offset-ra.off:])
	return r.decodeBlock(raw, h)
}

func (ra *readahead) holds(off uint64, n int) bool {
	return off >= ra.off && off+uint64(n) <= ra.off+uint64(len(ra.buf))
}

// fill reads the window at off: ra.size bytes, or what is left of the data
// section, and at least the n bytes of the block at off.
func (ra *readahead) fill(r *Reader, off uint64, n int) error {
	size := max(n, min(ra.size, int(r.dataEnd-off)))
	ra.size = readaheadMax
	if ra.mem == (cache.Handle{}) {
		ra.mem = cache.Alloc(readaheadMax)
	}
	ra.buf, ra.off = ra.mem.Block()[:size], off
	if err := r.readAt(ra.buf, off); err != nil {
		ra.buf = nil
		return err
	}
	return nil
}

// release frees the window's memory.
func (ra *readahead) release() {
	ra.mem.Release()
	*ra = readahead{}
}
