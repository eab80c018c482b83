package wal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// mappedTarget is a file system whose created files are Mappers, and the
// window size a Writer uses on it.
type mappedTarget struct {
	name string
	fs   vfs.FS
	dir  string
	ws   int
}

// mappedTargets returns MemFS and, on Linux, the OS, each with the real
// window and a small one (four pages) that records cross often.
func mappedTargets(t *testing.T) []mappedTarget {
	small := 4 * max(4096, os.Getpagesize())
	mem := vfs.NewMem()
	out := []mappedTarget{{"mem", mem, "/", windowSize}, {"mem/small", mem, "/", small}}
	if runtime.GOOS == "linux" {
		out = append(out, mappedTarget{"os", vfs.Default, t.TempDir(), windowSize},
			mappedTarget{"os/small", vfs.Default, t.TempDir(), small})
	}
	return out
}

func (m mappedTarget) create(t *testing.T, name string) (*Writer, string) {
	t.Helper()
	path := filepath.Join(m.dir, name)
	f, err := m.fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(vfs.Mapper); !ok {
		t.Fatalf("%s: created file is not a vfs.Mapper", m.name)
	}
	w := NewWriter(f)
	w.ws = m.ws
	return w, path
}

func fileBytes(t *testing.T, fsys vfs.FS, path string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMappedSameBytes: for random records (empty to more than a window,
// crossing block and window edges) a mapped Writer returns the offsets and
// leaves the bytes a writing Writer does: while open, followed by zeros to
// the end of the current window; after Close, exactly those bytes. Every
// other log is recyclable, and sealed before Close.
func TestMappedSameBytes(t *testing.T) {
	for _, m := range mappedTargets(t) {
		t.Run(m.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 0))
			for iter := range 4 {
				want := &memFile{}
				ww := NewWriter(want)
				w, path := m.create(t, fmt.Sprintf("%06d.log", iter))
				if iter%2 == 1 {
					ww.kind, w.kind = recyclable(uint64(iter)), recyclable(uint64(iter))
				}
				for i := range rng.IntN(200) {
					rec := randomRecord(rng, randomSize(rng, windowSize+windowSize/4))
					wantOff, _ := ww.Append(rec)
					off, err := w.Append(rec)
					if err != nil || off != wantOff {
						t.Fatalf("seed %d: Append %d: offset %d, %v; want %d", seed, i, off, err, wantOff)
					}
					if w.Size() != ww.Size() {
						t.Fatalf("seed %d: Size %d, want %d", seed, w.Size(), ww.Size())
					}
				}
				if iter%2 == 1 {
					if err := errors.Join(ww.Seal(), w.Seal()); err != nil {
						t.Fatalf("seed %d: Seal: %v", seed, err)
					}
				}
				live := fileBytes(t, m.fs, path)
				if end := (w.Size() + int64(m.ws) - 1) / int64(m.ws) * int64(m.ws); int64(len(live)) != end {
					t.Fatalf("seed %d: open log of %d bytes is %d long, want the window's end %d", seed, w.Size(), len(live), end)
				}
				if !bytes.Equal(live[:w.Size()], want.data) || tornBytes(live, w.Size()) != 0 {
					t.Fatalf("seed %d: open log differs from the written one, or is not followed by zeros", seed)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if got := fileBytes(t, m.fs, path); !bytes.Equal(got, want.data) {
					t.Fatalf("seed %d: closed log of %d bytes differs from the written one of %d", seed, len(got), len(want.data))
				}
			}
		})
	}
}

func mustCreate(t *testing.T, fsys vfs.FS, name string) vfs.File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMappedProcessCrash: after every Append, what a kill -9 leaves of the
// MemFS holds every record appended, then zeros: a torn tail of nothing.
func TestMappedProcessCrash(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	mem := vfs.NewMem()
	w := NewWriter(mustCreate(t, mem, "log"))
	w.ws = 16 << 10
	var model [][]byte
	for range 150 {
		rec := randomRecord(rng, randomSize(rng, 40<<10))
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
		model = append(model, rec)
		res := readAll(t, fileBytes(t, mem.ProcessCrashClone(), "log"))
		if res.err != io.EOF || res.dropped != 0 || len(res.records) != len(model) ||
			!bytes.Equal(res.records[len(model)-1], rec) {
			t.Fatalf("seed %d: after %d appends a process crash leaves %d records, %v, %d bytes dropped",
				seed, len(model), len(res.records), res.err, res.dropped)
		}
	}
}

// flakyMapper passes a MemFS file's Map through until the failAt-th call,
// which fails with err, as do later ones; it counts Writes.
type flakyMapper struct {
	vfs.File
	mem    *vfs.MemFS // holds the file, named "log"
	m      vfs.Mapper
	maps   int
	failAt int
	err    error
	writes int
}

func newFlakyMapper(t *testing.T, failAt int, err error) *flakyMapper {
	mem := vfs.NewMem()
	f := mustCreate(t, mem, "log")
	return &flakyMapper{File: f, mem: mem, m: f.(vfs.Mapper), failAt: failAt, err: err}
}

func (f *flakyMapper) Map(off int64, size int) (vfs.Window, error) {
	f.maps++
	if f.maps >= f.failAt {
		return nil, f.err
	}
	return f.m.Map(off, size)
}

func (f *flakyMapper) Truncate(size int64) error { return f.m.Truncate(size) }

func (f *flakyMapper) Write(p []byte) (int, error) { f.writes++; return f.File.Write(p) }

// TestMappedFallback: when the first Map fails (a file system without
// fallocate), in the first Append or in Prepare, the Writer writes
// instead, for the file's whole life, and the file is the same.
func TestMappedFallback(t *testing.T) {
	for _, prepare := range []bool{false, true} {
		f := newFlakyMapper(t, 1, &os.PathError{Op: "fallocate", Path: "log", Err: syscall.EOPNOTSUPP})
		w := NewWriter(f)
		if prepare {
			w.Prepare()
		}
		want, _ := logOf(t, [][]byte{[]byte("a"), make([]byte, windowSize), []byte("c")})
		for _, rec := range [][]byte{[]byte("a"), make([]byte, windowSize), []byte("c")} {
			if _, err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
		}
		if f.maps != 1 || f.writes != 3 {
			t.Fatalf("prepare %v: %d Maps, %d Writes; want one Map tried, then 3 Writes", prepare, f.maps, f.writes)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := fileBytes(t, f.mem, "log"); !bytes.Equal(got, want) {
			t.Fatalf("prepare %v: file of %d bytes differs from the written log of %d", prepare, len(got), len(want))
		}
	}
}

// TestMappedPrepare: Prepare maps the first window before any Append (the
// file is one window of zeros), the Appends after it leave the bytes a
// writing Writer does, and a log closed with no record is empty.
func TestMappedPrepare(t *testing.T) {
	for _, m := range mappedTargets(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, records := range []int{0, 3} {
				w, path := m.create(t, fmt.Sprintf("%06d.log", records))
				w.Prepare()
				if got := fileBytes(t, m.fs, path); len(got) != m.ws || tornBytes(got, 0) != 0 {
					t.Fatalf("prepared log is %d bytes, want a window of zeros, %d", len(got), m.ws)
				}
				recs := make([][]byte, records)
				for i := range recs {
					recs[i] = bytes.Repeat([]byte{byte('a' + i)}, 100*(i+1))
					if _, err := w.Append(recs[i]); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				want, _ := logOf(t, recs)
				if got := fileBytes(t, m.fs, path); !bytes.Equal(got, want) {
					t.Fatalf("%d records: closed log of %d bytes differs from the written one of %d", records, len(got), len(want))
				}
			}
		})
	}
}

// TestMappedStickyError: a Map failing once the log is mapped (a full
// disk at the second window) fails that Append and every later call; the
// records before it stay, and Close cuts the part of the failed record
// stored in the first window.
func TestMappedStickyError(t *testing.T) {
	enospc := &os.PathError{Op: "fallocate", Path: "log", Err: syscall.ENOSPC}
	f := newFlakyMapper(t, 2, enospc)
	w := NewWriter(f)
	w.ws = 4096
	if _, err := w.Append(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	size := w.Size()
	_, err := w.Append(make([]byte, 5000))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append across a failing Map: %v, want ENOSPC", err)
	}
	if _, err2 := w.Append(nil); err2 != err {
		t.Fatalf("Append after the error: %v, want %v", err2, err)
	}
	if err2 := w.Sync(); err2 != err {
		t.Fatalf("Sync after the error: %v, want %v", err2, err)
	}
	if f.writes != 0 || w.Size() != size {
		t.Fatalf("%d Writes, Size %d; want none (a mapped log never writes), %d", f.writes, w.Size(), size)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := int64(len(fileBytes(t, f.mem, "log"))); got != size {
		t.Fatalf("closed file of %d bytes, want %d", got, size)
	}
}

// waysMapper is a MemFS file whose windows count how the Writer hands
// them records: stored (Put) or written (Write).
type waysMapper struct {
	vfs.File
	m           vfs.Mapper
	puts, wrote int
}

func (f *waysMapper) Map(off int64, size int) (vfs.Window, error) {
	win, err := f.m.Map(off, size)
	if err != nil {
		return nil, err
	}
	return waysWindow{win, f}, nil
}

func (f *waysMapper) Truncate(size int64) error { return f.m.Truncate(size) }

type waysWindow struct {
	vfs.Window
	f *waysMapper
}

func (w waysWindow) Put(at int, p []byte) error   { w.f.puts++; return w.Window.Put(at, p) }
func (w waysWindow) Write(at int, p []byte) error { w.f.wrote++; return w.Window.Write(at, p) }

// TestMappedWritesAfterSync: a mapped Writer stores records until a Sync,
// writes them from the Sync to the end of that window (whose pages
// writeback left write-protected), and stores again in the next window;
// the log is the one a writing Writer makes.
func TestMappedWritesAfterSync(t *testing.T) {
	mem := vfs.NewMem()
	f := mustCreate(t, mem, "log")
	wf := &waysMapper{File: f, m: f.(vfs.Mapper)}
	w := NewWriter(wf)
	w.ws = 4096
	var recs [][]byte
	appendN := func(n int) {
		for range n {
			rec := bytes.Repeat([]byte{byte('a' + len(recs))}, 300)
			recs = append(recs, rec)
			if _, err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	step := func(what string, wantPuts, wantWrote int) {
		t.Helper()
		if wf.puts != wantPuts || wf.wrote != wantWrote {
			t.Fatalf("%s: %d stored, %d written; want %d, %d", what, wf.puts, wf.wrote, wantPuts, wantWrote)
		}
	}
	appendN(3)
	step("before a Sync", 3, 0)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	appendN(2)
	step("after a Sync", 3, 2)
	// A record frames to 307 bytes: 5 fill 1535 bytes of the window, 8
	// more end at 3991, and the 14th crosses the window's end, written up
	// to it and stored past it, in a window no Sync has touched.
	appendN(10)
	step("across the window", 3+1+1, 2+8+1)
	appendN(1)
	step("in the next window", 6, 11)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, _ := logOf(t, recs)
	if got := fileBytes(t, mem, "log"); !bytes.Equal(got, want) {
		t.Fatalf("closed log of %d bytes differs from the written one of %d", len(got), len(want))
	}
}

// mappedChildEnv, when set, names the log TestMappedKillChild appends to.
const mappedChildEnv = "MONBAN_WAL_MAPPED_CHILD"

// TestMappedKill runs a child process that appends records through the OS
// mapping and prints each offset once Append has returned, kills it with
// SIGKILL mid-stream, and reads the log: every acknowledged record is
// there, followed by at most a torn tail, and the file ends at a window
// boundary (the child was mapping, not writing).
func TestMappedKill(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the OS file system maps only on Linux")
	}
	path := filepath.Join(t.TempDir(), "000001.log")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMappedKillChild$")
	cmd.Env = append(os.Environ(), mappedChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var acked []int64
	for sc.Scan() {
		var off int64
		if _, err := fmt.Sscan(sc.Text(), &off); err != nil {
			continue // the testing framework's own output
		}
		acked = append(acked, off)
		if len(acked) == 3000 {
			cmd.Process.Kill()
		}
	}
	cmd.Wait()
	if len(acked) < 3000 {
		t.Fatalf("child acknowledged %d records before it ended, want 3000", len(acked))
	}
	log := fileBytes(t, vfs.Default, path)
	if len(log)%windowSize != 0 {
		t.Fatalf("log of %d bytes, not a whole number of windows: the child wrote, it did not map", len(log))
	}
	res := readAll(t, log)
	if res.err != io.EOF || len(res.records) < len(acked) {
		t.Fatalf("%d records acknowledged, %d read, ended with %v", len(acked), len(res.records), res.err)
	}
	for i, off := range acked {
		if res.offsets[i] != off || !bytes.Equal(res.records[i], killRecord(i)) {
			t.Fatalf("record %d at %d: read %d bytes at %d", i, off, len(res.records[i]), res.offsets[i])
		}
	}
}

// killRecord is the child's i-th record: sizes up to a few blocks, so the
// log crosses window boundaries within the first few hundred records.
func killRecord(i int) []byte {
	return bytes.Repeat([]byte{byte(i)}, (i*7919)%(3*blockSize))
}

// TestMappedKillChild is the child of TestMappedKill; it does nothing
// unless mappedChildEnv is set. It appends until killed.
func TestMappedKillChild(t *testing.T) {
	path := os.Getenv(mappedChildEnv)
	if path == "" {
		t.Skip("child of TestMappedKill")
	}
	f, err := vfs.Default.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f)
	for i := 0; ; i++ {
		off, err := w.Append(killRecord(i))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(off)
	}
}

// TestMappedMachineCrash: a machine crash keeps what Sync covered and, of
// a synced and closed log, undoes the unsynced Truncate of Close: the log
// comes back with its last window's zeros, every record there, nothing
// dropped. (An engine that syncs a WAL, rotates and closes it relies on
// that log not reading as torn.)
func TestMappedMachineCrash(t *testing.T) {
	mem := vfs.NewMem()
	w := NewWriter(mustCreate(t, mem, "log"))
	if err := mem.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for i := range 50 {
		recs = append(recs, bytes.Repeat([]byte{byte(i)}, i*100))
		if _, err := w.Append(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([]byte("unsynced")); err != nil {
		t.Fatal(err)
	}
	check := func(when string, log []byte) {
		t.Helper()
		res := readAll(t, log)
		if len(log) != windowSize || res.err != io.EOF || res.dropped != 0 || len(res.records) != len(recs) {
			t.Fatalf("%s: %d bytes, %d records, %v, %d dropped; want %d bytes, %d records, none dropped",
				when, len(log), len(res.records), res.err, res.dropped, windowSize, len(recs))
		}
	}
	check("crash before Close", fileBytes(t, mem.CrashClone(), "log"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	check("crash after Close", fileBytes(t, mem.CrashClone(), "log"))
}
