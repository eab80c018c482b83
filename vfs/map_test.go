package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// mappers returns the implementations that offer Mapper on this platform.
func mappers(t *testing.T) []impl {
	var out []impl
	for _, im := range impls(t) {
		f, err := im.fs.Create(filepath.Join(im.dir, "probe"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(Mapper); ok {
			out = append(out, im)
		}
		f.Close()
	}
	return out
}

// TestMapperWho: the OS file system is a Mapper on Linux only, MemFS
// always, and FaultFS never (its faults are on Write, and wrapping a
// Mapper must not pass the interface through).
func TestMapperWho(t *testing.T) {
	var got []string
	for _, im := range mappers(t) {
		got = append(got, im.name)
	}
	want := []string{"mem"}
	if runtime.GOOS == "linux" {
		want = []string{"os", "mem"}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Mappers: %v, want %v", got, want)
	}
}

// TestMapStoreTruncate: a window extends the file with zeros at once;
// stores are what a reader sees, the rest reads as zeros, a second window
// continues the first, and Truncate cuts the zero tail.
func TestMapStoreTruncate(t *testing.T) {
	for _, im := range mappers(t) {
		t.Run(im.name, func(t *testing.T) {
			name := filepath.Join(im.dir, "log")
			f, err := im.fs.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			m := f.(Mapper)
			ws := 2 * max(memPageSize, os.Getpagesize())
			w, err := m.Map(0, ws)
			if err != nil {
				t.Fatal(err)
			}
			if size, _ := f.Size(); size != int64(ws) {
				t.Fatalf("size after Map %d, want %d", size, ws)
			}
			copy(w.Bytes(), "hello")
			w.Stored(5)
			if got := readFile(t, im.fs, name); len(got) != ws || string(got[:5]) != "hello" || !allZero(got[5:]) {
				t.Fatalf("after one store: %d bytes, %q…", len(got), got[:8])
			}
			w.Bytes()[ws-1] = 'x'
			w.Stored(ws)
			if err := w.Unmap(); err != nil {
				t.Fatal(err)
			}
			if err := w.Unmap(); err == nil {
				t.Fatal("second Unmap succeeded")
			}
			w, err = m.Map(int64(ws), ws)
			if err != nil {
				t.Fatal(err)
			}
			copy(w.Bytes(), "world")
			w.Stored(5)
			if err := w.Unmap(); err != nil {
				t.Fatal(err)
			}
			if err := m.Truncate(int64(ws) + 5); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, ws+5)
			copy(want, "hello")
			want[ws-1] = 'x'
			copy(want[ws:], "world")
			if got := readFile(t, im.fs, name); !bytes.Equal(got, want) {
				t.Fatalf("file after Truncate: %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

func allZero(b []byte) bool { return !slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) }

// TestMemMapCrash: stored bytes are handed to the OS (a process crash
// keeps them, zeros and all) but durable only after Sync, as written ones;
// an unsynced Truncate is lost to a machine crash, which leaves the synced
// reserved length as zeros.
func TestMemMapCrash(t *testing.T) {
	m := newCrashFS(t)
	f, err := m.Create("/db/log")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/db"); err != nil {
		t.Fatal(err)
	}
	w, err := f.(Mapper).Map(0, memPageSize)
	if err != nil {
		t.Fatal(err)
	}
	copy(w.Bytes(), "abc")
	w.Stored(3)
	if got := readFile(t, m.ProcessCrashClone(), "/db/log"); len(got) != memPageSize || string(got[:3]) != "abc" || !allZero(got[3:]) {
		t.Fatalf("process crash: %d bytes %q…", len(got), got[:4])
	}
	if got := readFile(t, m.CrashClone(), "/db/log"); len(got) != 0 {
		t.Fatalf("machine crash before Sync: %d bytes, want none", len(got))
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	copy(w.Bytes()[3:], "def")
	w.Stored(6)
	if got := readFile(t, m.CrashClone(), "/db/log"); len(got) != memPageSize || string(got[:6]) != "abc\x00\x00\x00" {
		t.Fatalf("machine crash after Sync, store after it: %d bytes %q…", len(got), got[:6])
	}
	// The process-crash image keeps what is durable as it is in m.
	if got := readFile(t, m.ProcessCrashClone().CrashClone(), "/db/log"); len(got) != memPageSize || string(got[:6]) != "abc\x00\x00\x00" {
		t.Fatalf("machine crash of a process-crash image: %d bytes %q…", len(got), got[:6])
	}
	w.Unmap()
	if err := f.(Mapper).Truncate(6); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, m, "/db/log"); string(got) != "abcdef" {
		t.Fatalf("after Truncate: %q", got)
	}
	if got := readFile(t, m.CrashClone(), "/db/log"); len(got) != memPageSize {
		t.Fatalf("machine crash after an unsynced Truncate: %d bytes, want %d", len(got), memPageSize)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, m.CrashClone(), "/db/log"); string(got) != "abcdef" {
		t.Fatalf("machine crash after a synced Truncate: %q", got)
	}
}

// TestMemMapConcurrentRead: readers may ReadAt a file while its writer
// stores into a window (a checkpoint copying a live WAL). Run with -race:
// the window is the writer's, copied into the file under the lock.
func TestMemMapConcurrentRead(t *testing.T) {
	m := NewMem()
	f, err := m.Create("log")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.(Mapper).Map(0, 16*memPageSize)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Open("log")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 4096)
		for {
			select {
			case <-done:
				return
			default:
			}
			for off := int64(0); off < 16*memPageSize; off += int64(len(buf)) {
				n, err := r.ReadAt(buf, off)
				if err != nil && err != io.EOF {
					t.Error(err)
					return
				}
				for i, c := range buf[:n] {
					if c != 0 && c != byte((off+int64(i))%251+1) {
						t.Errorf("byte %d: %d", off+int64(i), c)
						return
					}
				}
			}
		}
	}()
	b := w.Bytes()
	for i := range b {
		b[i] = byte(i%251 + 1)
		if i%1000 == 999 {
			w.Stored(i + 1)
		}
	}
	w.Stored(len(b))
	close(done)
	wg.Wait()
}

// TestMapMisuse: MemFS refuses what fileData cannot do or mmap would not.
func TestMapMisuse(t *testing.T) {
	m := NewMem()
	f, _ := m.Create("log")
	f.Write([]byte("x"))
	for _, c := range []struct {
		off  int64
		size int
	}{{0, memPageSize}, {1, memPageSize}, {memPageSize, 0}} {
		if _, err := f.(Mapper).Map(c.off, c.size); err == nil {
			t.Errorf("Map(%d, %d) over a file with a byte written succeeded", c.off, c.size)
		}
	}
	r, _ := m.Open("log")
	if _, ok := r.(Mapper); ok {
		if _, err := r.(Mapper).Map(memPageSize, memPageSize); err == nil {
			t.Error("Map of a file from Open succeeded")
		}
	}
	f.Close()
	if _, err := f.(Mapper).Map(memPageSize, memPageSize); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Map of a closed file: %v, want fs.ErrClosed", err)
	}
}
