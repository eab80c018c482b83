package wal

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/internal/cpuclock"
	"github.com/monbandb/monban/vfs"
)

// rotateAt bounds a benchmark's log file: when the current one passes it,
// it is closed and removed and a new one created (off the clock), so long
// runs neither fill the disk nor pile up dirty pages until the kernel
// throttles the writer to the disk's speed, which would make ns/op depend
// on b.N and on the disk rather than on the write path measured.
const rotateAt = 64 << 20

// BenchmarkAppend measures Append throughput on the operating system's file
// system, without Sync and with a Sync every N records. MB/s counts record
// bytes; framing-% is the file bytes the framing adds on top of them.
//
//	go test ./wal -run XXX -bench 'Append$' -benchmem
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{128, 1 << 10, 16 << 10, 256 << 10} {
		for _, every := range []int{0, 256, 16, 1} {
			b.Run(fmt.Sprintf("size=%d/sync=%s", size, syncName(every)), func(b *testing.B) {
				benchAppend(b, size, every, 0, false)
			})
		}
	}
}

// BenchmarkRecyclableAppend is BenchmarkAppend without Sync on recyclable
// logs (checksums seeded with the log number too), by Writer and
// BufferedWriter, for comparison with the legacy logs of BenchmarkAppend
// and BenchmarkBufferedAppend.
//
//	go test ./wal -run XXX -bench RecyclableAppend -benchmem
func BenchmarkRecyclableAppend(b *testing.B) {
	for _, size := range []int{100, 128, 1 << 10, 4 << 10, 16 << 10} {
		for _, limit := range []int{0, bufferLimit} {
			name := fmt.Sprintf("size=%d/writer=unbuffered", size)
			if limit > 0 {
				name = fmt.Sprintf("size=%d/writer=buffered", size)
			}
			b.Run(name, func(b *testing.B) { benchAppend(b, size, 0, limit, true) })
		}
	}
}

// BenchmarkBufferedAppend compares the two writers on the record sizes of
// small and large commits: writes/op is the write(2) calls per Append,
// 1 for Writer and what coalescing leaves for BufferedWriter. Its
// ns/op includes handing the last records to the file (Flush).
//
//	go test ./wal -run XXX -bench BufferedAppend -benchmem -count 3
func BenchmarkBufferedAppend(b *testing.B) {
	for _, size := range []int{100, 4 << 10} {
		for _, every := range []int{0, 1} {
			for _, limit := range []int{0, bufferLimit} {
				name := fmt.Sprintf("size=%d/sync=%s/writer=unbuffered", size, syncName(every))
				if limit > 0 {
					name = fmt.Sprintf("size=%d/sync=%s/writer=buffered", size, syncName(every))
				}
				b.Run(name, func(b *testing.B) { benchAppend(b, size, every, limit, false) })
			}
		}
	}
}

// BenchmarkMappedAppend compares appending 100-byte records by write(2)
// with storing them through the OS mapping (Linux), no Sync: writes/op and
// maps/op count the system calls each makes per Append (a Map is a
// fallocate, an mmap and a munmap per 256 KiB window).
//
//	go test ./wal -run XXX -bench MappedAppend -benchtime 2000000x -count 5
func BenchmarkMappedAppend(b *testing.B) {
	for _, size := range []int{100, 4 << 10} {
		for _, mapped := range []bool{false, true} {
			name := fmt.Sprintf("size=%d/writer=write", size)
			if mapped {
				name = fmt.Sprintf("size=%d/writer=mapped", size)
			}
			b.Run(name, func(b *testing.B) { benchMapped(b, size, mapped) })
		}
	}
}

// countingMapper counts the Maps of a file that is a vfs.Mapper.
type countingMapper struct {
	countingFile
	m    vfs.Mapper
	maps *int64
}

func (f countingMapper) Map(off int64, size int) (vfs.Window, error) {
	*f.maps++
	return f.m.Map(off, size)
}

func (f countingMapper) Truncate(size int64) error { return f.m.Truncate(size) }

func benchMapped(b *testing.B, size int, mapped bool) {
	logs := benchLogs{b: b, dir: b.TempDir()}
	var writes atomic.Int64
	var maps int64
	open := func() *Writer {
		f := logs.create()
		cf := countingFile{f, &writes} // hides the Mapper: Write path
		if m, ok := f.(vfs.Mapper); ok && mapped {
			return NewWriter(countingMapper{cf, m, &maps})
		}
		if mapped {
			b.Skip("the OS file system maps only on Linux")
		}
		return NewWriter(cf)
	}
	w := open()
	rec := bytes.Repeat([]byte{0xa5}, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
		if w.Size() >= rotateAt {
			b.StopTimer()
			logs.retire(w)
			w = open()
			b.StartTimer()
		}
	}
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
	b.ReportMetric(float64(maps)/float64(b.N), "maps/op")
}

// BenchmarkSyncedAppend appends a 1 KiB record, the shape of one commit
// group of eight 100-byte writes, and syncs it, as a durable log does,
// by write(2) and through the OS mapping (Linux). cpu-ns/op is the
// process's user and system time per op: the fsync dominates the wall
// time, while a store into a page writeback left write-protected costs a
// fault that only the CPU time shows (the Writer's synced field).
//
//	go test ./wal -run XXX -bench SyncedAppend -benchtime 5000x -count 5
func BenchmarkSyncedAppend(b *testing.B) {
	for _, mapped := range []bool{false, true} {
		name := "writer=write"
		if mapped {
			name = "writer=mapped"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := vfs.Default.Create(filepath.Join(dir, "000001.log"))
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := f.(vfs.Mapper); mapped && !ok {
				b.Skip("the OS file system maps only on Linux")
			}
			var w *Writer
			if mapped {
				w = NewWriter(f)
			} else {
				w = NewWriter(struct{ vfs.File }{f}) // hides the Mapper
			}
			rec := bytes.Repeat([]byte{0xa5}, 1<<10)
			b.SetBytes(int64(len(rec)))
			cpu0 := cpuclock.Process()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := w.Append(rec); err != nil {
					b.Fatal(err)
				}
				if err := w.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuclock.Process()-cpu0)/float64(b.N), "cpu-ns/op")
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkBufferLimit measures BufferedWriter appends by buffer size,
// the table behind bufferLimit.
//
//	go test ./wal -run XXX -bench BufferLimit -benchtime 200000x -count 5
func BenchmarkBufferLimit(b *testing.B) {
	for _, size := range []int{100, 4 << 10} {
		for _, limit := range []int{256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20} {
			b.Run(fmt.Sprintf("size=%d/limit=%dK", size, limit>>10), func(b *testing.B) {
				benchAppend(b, size, 0, limit, false)
			})
		}
	}
}

func syncName(every int) string {
	if every == 0 {
		return "never"
	}
	return fmt.Sprint(every)
}

// benchLogs are the log files a benchmark appends to one after another:
// each is removed once retired, so the disk holds one.
type benchLogs struct {
	b   *testing.B
	dir string
	n   int
}

func (l *benchLogs) name() string { return filepath.Join(l.dir, fmt.Sprintf("%06d.log", l.n)) }

// create starts the next log file.
func (l *benchLogs) create() vfs.File {
	l.n++
	f, err := vfs.Default.Create(l.name())
	if err != nil {
		l.b.Fatal(err)
	}
	return f
}

// retire closes w, the writer of the current log file, and removes the file.
func (l *benchLogs) retire(w io.Closer) {
	if err := w.Close(); err != nil {
		l.b.Fatal(err)
	}
	if err := vfs.Default.Remove(l.name()); err != nil {
		l.b.Fatal(err)
	}
}

// benchWriter is what benchAppend needs of Writer and BufferedWriter.
type benchWriter interface {
	Append(record []byte) (int64, error)
	Sync() error
	Size() int64
	Close() error
}

// countingFile counts the Writes that reach a file. The count is atomic
// because a BufferedWriter writes from its flusher.
type countingFile struct {
	vfs.File
	writes *atomic.Int64
}

func (f countingFile) Write(p []byte) (int, error) {
	f.writes.Add(1)
	return f.File.Write(p)
}

// benchAppend appends b.N records of size bytes, syncing every syncEvery
// (0: never), through a Writer or, with limit > 0, a BufferedWriter of
// buffers of limit bytes, to legacy logs or recyclable ones.
func benchAppend(b *testing.B, size, syncEvery, limit int, recycle bool) {
	logs := benchLogs{b: b, dir: b.TempDir()}
	var writes atomic.Int64
	open := func() benchWriter {
		cf := countingFile{logs.create(), &writes}
		k := logKind{recyclable: recycle, num: uint64(logs.n)}
		if limit > 0 {
			w := newBufferedWriterSize(cf, blockSize, limit)
			w.kind = k
			return w
		}
		w := NewWriter(cf)
		w.kind = k
		return w
	}
	// flush makes the clock cover every byte appended before it stops.
	flush := func(w benchWriter) {
		if bw, ok := w.(*BufferedWriter); ok {
			if err := bw.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	w := open()
	rec := bytes.Repeat([]byte{0xa5}, size)
	var written, syncs int64
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
		if syncEvery > 0 && (i+1)%syncEvery == 0 {
			if err := w.Sync(); err != nil {
				b.Fatal(err)
			}
			syncs++
		}
		if w.Size() >= rotateAt {
			flush(w)
			b.StopTimer()
			written += w.Size()
			logs.retire(w)
			w = open()
			b.StartTimer()
		}
	}
	flush(w)
	b.StopTimer()
	written += w.Size()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*float64(written-int64(b.N)*int64(size))/float64(int64(b.N)*int64(size)+1), "framing-%")
	b.ReportMetric(float64(syncs)/float64(b.N), "syncs/op")
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
}

// BenchmarkRead measures Reader throughput over an in-memory log (the
// recovery path without the disk).
//
//	go test ./wal -run XXX -bench Read -benchmem
func BenchmarkRead(b *testing.B) {
	for _, size := range []int{128, 1 << 10, 16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) { benchRead(b, size, false) })
	}
}

// BenchmarkRecyclableRead is BenchmarkRead over a recyclable log, read by
// NewRecyclableReader.
//
//	go test ./wal -run XXX -bench RecyclableRead -benchmem
func BenchmarkRecyclableRead(b *testing.B) {
	for _, size := range []int{128, 1 << 10, 16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) { benchRead(b, size, true) })
	}
}

func benchRead(b *testing.B, size int, recycle bool) {
	n := max(1, (8<<20)/size) // an 8 MiB log
	f := &memFile{}
	w := NewWriter(f)
	newReader := func(r io.Reader) *Reader { return NewReader(r, "bench.log") }
	if recycle {
		w = NewRecyclableWriter(f, 12)
		newReader = func(r io.Reader) *Reader { return NewRecyclableReader(r, "000012.log", 12) }
	}
	rec := bytes.Repeat([]byte{0x5a}, size)
	for range n {
		if _, err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
	br := bytes.NewReader(f.data)
	r := newReader(br)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			br.Reset(f.data)
			r = newReader(br)
		}
	}
}
