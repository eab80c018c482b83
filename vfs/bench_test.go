package vfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// benchImpls are the file systems benchmarked side by side; the fault
// wrapper's cost is its figure minus the one below it.
func benchImpls(b *testing.B) []impl {
	mem := NewMem()
	mem.MkdirAll("/db")
	mem2 := NewMem()
	mem2.MkdirAll("/db")
	return []impl{
		{"os", Default, b.TempDir()},
		{"mem", mem, "/db"},
		{"fault(mem)", NewFault(mem2), "/db"},
	}
}

// BenchmarkWrite appends 4 KiB blocks, as a WAL or table writer does,
// starting the file over every 64 MiB to bound memory.
func BenchmarkWrite(b *testing.B) {
	const block, limit = 4 << 10, 64 << 20
	buf := make([]byte, block)
	for _, im := range benchImpls(b) {
		b.Run(im.name, func(b *testing.B) {
			name := filepath.Join(im.dir, "w")
			f, err := im.fs.Create(name)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(block)
			b.ReportAllocs()
			written := 0
			for b.Loop() {
				if written >= limit {
					f.Close()
					f, _ = im.fs.Create(name)
					written = 0
				}
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				written += block
			}
			f.Close()
		})
	}
}

// BenchmarkReadAt reads 4 KiB blocks at scattered offsets of a 16 MiB file,
// as an SSTable reader on a block-cache miss does. It must not allocate.
func BenchmarkReadAt(b *testing.B) {
	const block, size = 4 << 10, 16 << 20
	buf := make([]byte, block)
	for _, im := range benchImpls(b) {
		b.Run(im.name, func(b *testing.B) {
			name := filepath.Join(im.dir, "r")
			w, _ := im.fs.Create(name)
			for i := 0; i < size/block; i++ {
				w.Write(buf)
			}
			w.Close()
			f, err := im.fs.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(block)
			b.ReportAllocs()
			off := int64(0)
			for b.Loop() {
				off = (off + 7919*block) % size // a stride prime to the block count
				if _, err := f.ReadAt(buf, off); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemSync: a MemFS Sync costs the same however long the file is
// (it records a prefix, it does not copy), so crash tests of big files
// with frequent syncs stay fast.
func BenchmarkMemSync(b *testing.B) {
	m := NewMem()
	f, _ := m.Create("/log")
	rec := make([]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		f.Write(rec)
		f.Sync()
	}
	size, _ := f.Size()
	b.ReportMetric(float64(size)/float64(b.N), "bytes-synced/op")
}

// BenchmarkSyncedAppend appends records of 1, 4 and 64 KiB to an OS file
// through Map's windows, each written (Window.Write) and synced as a
// durable WAL commit is: into fresh space Map reserves with fallocate,
// and into a file reused over blocks written before (Reuser). On ext4 the
// first pays at each fsync for its unwritten extents' conversion, the
// reason WALs are recycled (docs/write-path.md, "Recycled WALs"). Run the
// two side by side: `-bench SyncedAppend -count 3`.
func BenchmarkSyncedAppend(b *testing.B) {
	const window, limit = 256 << 10, 64 << 20
	for _, size := range []int{1 << 10, 4 << 10, 64 << 10} {
		for _, reused := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%d/reused=%v", size, reused), func(b *testing.B) {
				dir := b.TempDir()
				open := func() File {
					name := filepath.Join(dir, "log")
					if !reused {
						f, err := Default.Create(name)
						if err != nil {
							b.Fatal(err)
						}
						return f
					}
					old := filepath.Join(dir, "old")
					f, err := Default.Create(old)
					if err == nil {
						_, err = f.Write(make([]byte, limit+window))
					}
					if err == nil {
						err = errors.Join(f.Sync(), f.Close())
					}
					if err == nil {
						f, err = Default.(Reuser).Reuse(old, name)
					}
					if err != nil {
						b.Fatal(err)
					}
					return f
				}
				rec := make([]byte, size)
				var f File
				var win Window
				off, winOff := int64(limit), int64(0)
				b.SetBytes(int64(size))
				for b.Loop() {
					if off+int64(size) > limit {
						b.StopTimer()
						if f != nil {
							win.Unmap()
							f.Close()
						}
						f, off, winOff, win = open(), 0, 0, nil
						b.StartTimer()
					}
					for at := off; at < off+int64(size); {
						if win == nil || at == winOff+window {
							if win != nil {
								win.Unmap()
							}
							var err error
							winOff = at
							if win, err = f.(Mapper).Map(winOff, window); err != nil {
								b.Skipf("no Map here: %v", err)
							}
						}
						n := min(off+int64(size)-at, winOff+window-at)
						if err := win.Write(int(at-winOff), rec[:n]); err != nil {
							b.Fatal(err)
						}
						at += n
					}
					off += int64(size)
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				if win != nil {
					win.Unmap()
				}
				f.Close()
			})
		}
	}
}

// BenchmarkScatteredAppend appends 2 KiB records through Map's windows
// to a log, each written and synced, taking turns with a partner file
// reserved whole at its creation (as raft-wal's segments are) that does
// the same, and reports the mean append-plus-fsync time of each and
// their ratio; the partner measures the disk at the same moments.
// Another file allocates between the log's windows, as other stores and
// tables do, so that each window is an extent of its own: past the four
// an ext4 inode holds, the log's fsyncs cost more than the partner's,
// unless the log was preallocated first (docs/write-path.md,
// "Preallocated WALs").
func BenchmarkScatteredAppend(b *testing.B) {
	const window, limit, size = 256 << 10, 16 << 20, 2 << 10
	for _, prealloc := range []bool{false, true} {
		b.Run(fmt.Sprintf("preallocated=%v", prealloc), func(b *testing.B) {
			dir := b.TempDir()
			var log, partner, spacer File
			var logWin, partnerWin Window
			closeAll := func() {
				for _, w := range []Window{logWin, partnerWin} {
					if w != nil {
						w.Unmap()
					}
				}
				for _, f := range []File{log, partner, spacer} {
					if f != nil {
						f.Close()
					}
				}
			}
			defer closeAll()
			open := func() {
				closeAll()
				var err error
				names := []string{"log", "partner", "spacer"}
				for i, f := range []*File{&log, &partner, &spacer} {
					if *f, err = Default.Create(filepath.Join(dir, names[i])); err != nil {
						b.Fatal(err)
					}
				}
				if partnerWin, err = partner.(Mapper).Map(0, limit); err != nil {
					b.Skipf("no Map here: %v", err)
				}
				if prealloc {
					if err := log.(Preallocator).Preallocate(limit); err != nil {
						b.Skipf("no Preallocate here: %v", err)
					}
				}
				logWin = nil
			}
			rec := make([]byte, size)
			appendSync := func(f File, w Window, at int) time.Duration {
				start := time.Now()
				if err := w.Write(at, rec); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			var logTime, partnerTime time.Duration
			off := int64(limit)
			for b.Loop() {
				if off == limit {
					b.StopTimer()
					open()
					off = 0
					b.StartTimer()
				}
				if off%window == 0 {
					if logWin != nil {
						logWin.Unmap()
					}
					w, err := spacer.(Mapper).Map(off, window)
					if err == nil {
						err = w.Unmap()
					}
					if err == nil {
						logWin, err = log.(Mapper).Map(off, window)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				logTime += appendSync(log, logWin, int(off%window))
				partnerTime += appendSync(partner, partnerWin, int(off))
				off += size
			}
			b.ReportMetric(float64(logTime.Microseconds())/float64(b.N), "log-µs/op")
			b.ReportMetric(float64(partnerTime.Microseconds())/float64(b.N), "partner-µs/op")
			b.ReportMetric(float64(logTime)/float64(partnerTime), "x-partner")
		})
	}
}
