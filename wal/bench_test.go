package wal

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// rotateAt bounds a benchmark's log file: a new one is created (off the
// clock) when the current one passes it, so long runs don't fill the disk.
const rotateAt = 64 << 20

// BenchmarkAppend measures Append throughput on the operating system's file
// system, without Sync and with a Sync every N records. MB/s counts record
// bytes; framing-% is the file bytes the framing adds on top of them.
//
//	go test ./wal -run XXX -bench Append -benchmem
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{128, 1 << 10, 16 << 10, 256 << 10} {
		for _, every := range []int{0, 256, 16, 1} {
			name := fmt.Sprintf("size=%d/sync=never", size)
			if every > 0 {
				name = fmt.Sprintf("size=%d/sync=%d", size, every)
			}
			b.Run(name, func(b *testing.B) { benchAppend(b, size, every) })
		}
	}
}

func benchAppend(b *testing.B, size, syncEvery int) {
	dir := b.TempDir()
	files := 0
	open := func() (*Writer, vfs.File) {
		files++
		f, err := vfs.Default.Create(filepath.Join(dir, fmt.Sprintf("%06d.log", files)))
		if err != nil {
			b.Fatal(err)
		}
		return NewWriter(f), f
	}
	w, _ := open()
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
			b.StopTimer()
			written += w.Size()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			w, _ = open()
			b.StartTimer()
		}
	}
	b.StopTimer()
	written += w.Size()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*float64(written-int64(b.N)*int64(size))/float64(int64(b.N)*int64(size)+1), "framing-%")
	b.ReportMetric(float64(syncs)/float64(b.N), "syncs/op")
}

// BenchmarkRead measures Reader throughput over an in-memory log (the
// recovery path without the disk).
//
//	go test ./wal -run XXX -bench Read -benchmem
func BenchmarkRead(b *testing.B) {
	for _, size := range []int{128, 1 << 10, 16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			n := max(1, (8<<20)/size) // an 8 MiB log
			f := &memFile{}
			w := NewWriter(f)
			rec := bytes.Repeat([]byte{0x5a}, size)
			for range n {
				if _, err := w.Append(rec); err != nil {
					b.Fatal(err)
				}
			}
			br := bytes.NewReader(f.data)
			r := NewReader(br, "bench.log")
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Next(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					br.Reset(f.data)
					r = NewReader(br, "bench.log")
				}
			}
		})
	}
}
