package lsm

import (
	"io"

	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/vfs"
)

// compactionReadahead is how much a compaction input reads per system
// call. A compaction reads each input table once, front to back, a block
// at a time; 64 KiB reads turn ~16 block-sized preads into one. Every L0
// input has its window at once (an L0 compaction can take 18 tables), and
// each deeper input level one (its tables are opened one after another),
// so the window is held small: when every input table had one, 256 KiB
// windows were 5.9 MB of a 1M-key fill's peak heap, and the process's
// peak RSS fell from 50 to 45 MB with 64 KiB.
const compactionReadahead = offheap.ChunkSize // 64 KiB, the size offheap keeps spare

// readaheadFile serves ReadAt from a window it refills with large reads.
// It is for one goroutine reading forward (a compaction input); a read
// that misses the window just moves it. The window lives outside the heap
// (a ChunkSize mapping, which offheap keeps spare for the next input), so
// a compaction's windows do not count twice in the heap the collector
// lets grow; Close releases it.
type readaheadFile struct {
	vfs.File
	mem    *offheap.Buffer // the window's memory, once a read needs it
	buf    []byte          // the window: mem's bytes read so far
	bufOff int64           // file offset of buf[0]
	size   int64
}

func newReadaheadFile(f vfs.File) (*readaheadFile, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	return &readaheadFile{File: f, size: size}, nil
}

// ReadAt implements io.ReaderAt over the window.
func (r *readaheadFile) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > compactionReadahead {
		return r.File.ReadAt(p, off)
	}
	if off < r.bufOff || off+int64(len(p)) > r.bufOff+int64(len(r.buf)) {
		if err := r.fill(off); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[off-r.bufOff:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill reads the window starting at off (or what is left of the file).
func (r *readaheadFile) fill(off int64) error {
	if off >= r.size {
		r.buf, r.bufOff = r.buf[:0], off
		return nil
	}
	n := min(int64(compactionReadahead), r.size-off)
	if r.mem == nil {
		r.mem = offheap.New(compactionReadahead)
	}
	r.buf = r.mem.Bytes()[:n]
	m, err := r.File.ReadAt(r.buf, off)
	r.buf, r.bufOff = r.buf[:m], off
	if m == int(n) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Close closes the file and releases the window.
func (r *readaheadFile) Close() error {
	r.mem.Release()
	r.mem, r.buf = nil, nil
	return r.File.Close()
}
