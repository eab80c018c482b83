package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"
)

// memRead returns what name holds in m, or "<missing>".
func memRead(t *testing.T, m *MemFS, name string) string {
	t.Helper()
	b, err := ReadFile(m, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// crashShows checks what a machine crash of m leaves under each name in
// want ("<missing>" for none), and that a machine crash after a process
// crash leaves the same.
func crashShows(t *testing.T, step string, m *MemFS, want map[string]string) {
	t.Helper()
	for _, c := range []struct {
		what string
		fs   *MemFS
	}{{"crash", m.CrashClone()}, {"process crash, then crash", m.ProcessCrashClone().CrashClone()}} {
		for name, w := range want {
			if got := memRead(t, c.fs, name); got != w {
				t.Errorf("%s: %s: %s holds %q, want %q", step, c.what, name, got, w)
			}
		}
	}
}

// TestReuseCrash walks a reuse through its durability steps: the new name
// needs SyncDir as for Rename, an unsynced overwrite is lost and the old
// durable bytes show through, a synced one is kept with the old bytes
// past it, and a process crash keeps every byte written.
func TestReuseCrash(t *testing.T) {
	m := newCrashFS(t)
	a, b := "/db/a", "/db/b"
	f, _ := m.Create(a)
	mustWrite(t, f, []byte("0123456789"))
	f.Sync()
	f.Close()
	m.SyncDir("/db")

	f = mustReuse(t, m, a, b)
	crashShows(t, "1 reused, nothing synced", m, map[string]string{a: "0123456789", b: "<missing>"})
	mustWrite(t, f, []byte("AB"))
	crashShows(t, "2 written, not synced", m, map[string]string{a: "0123456789", b: "<missing>"})
	m.SyncDir("/db")
	crashShows(t, "3 directory synced", m, map[string]string{a: "<missing>", b: "0123456789"})
	f.Sync()
	crashShows(t, "4 file synced", m, map[string]string{b: "AB23456789"})
	mustWrite(t, f, []byte("CD"))
	crashShows(t, "5 written past the sync", m, map[string]string{b: "AB23456789"})
	if got := memRead(t, m.ProcessCrashClone(), b); got != "ABCD456789" {
		t.Errorf("5: process crash: b holds %q, want every byte written", got)
	}
	mustWrite(t, f, []byte("EFGHIJKLMN"))
	crashShows(t, "6 written past the old end", m, map[string]string{b: "AB23456789"})
	f.Sync()
	crashShows(t, "7 synced", m, map[string]string{b: "ABCDEFGHIJKLMN"})
	f.Close()

	// The file synced before its new name: the old name holds the new bytes.
	f = mustReuse(t, m, b, a)
	mustWrite(t, f, []byte("x"))
	f.Sync()
	crashShows(t, "8 reused again, synced, directory not", m, map[string]string{a: "<missing>", b: "xBCDEFGHIJKLMN"})
}

// TestReuseCrashOldLife: what a crash shows of a reused file's old life.
// Before the new life's first Sync, what the old one synced (not its
// unsynced tail); after it, everything the reader sees — fsync writes
// back every dirty page of the inode, the old life's included. An
// unsynced Truncate or Create of the reused file is lost like a write.
func TestReuseCrashOldLife(t *testing.T) {
	m := newCrashFS(t)
	f, _ := m.Create("/db/a")
	mustWrite(t, f, []byte("durable"))
	f.Sync()
	mustWrite(t, f, []byte(" tail"))
	f.Close()
	f = mustReuse(t, m, "/db/a", "/db/a")
	m.SyncDir("/db")
	crashShows(t, "1 reused", m, map[string]string{"/db/a": "durable"})
	mustWrite(t, f, []byte("D"))
	f.Sync()
	crashShows(t, "2 synced", m, map[string]string{"/db/a": "Durable tail"})
	if err := f.(Mapper).Truncate(3); err != nil {
		t.Fatal(err)
	}
	crashShows(t, "3 truncated, not synced", m, map[string]string{"/db/a": "Durable tail"})
	f.Sync()
	crashShows(t, "4 truncated, synced", m, map[string]string{"/db/a": "Dur"})
	f.Close()

	f = mustReuse(t, m, "/db/a", "/db/a")
	mustWrite(t, f, []byte("xy"))
	f.Sync()
	f.Close()
	if f, err := m.Create("/db/a"); err != nil {
		t.Fatal(err)
	} else {
		defer f.Close()
	}
	if got := memRead(t, m, "/db/a"); got != "" {
		t.Fatalf("Create of a reused file: it reads %q, want nothing", got)
	}
	crashShows(t, "5 created over, not synced", m, map[string]string{"/db/a": "xyr"})
}

// reuseModel is what a reused MemFS file should hold, the plainest way:
// contents copied, not shared. written and reserved are this life's bytes
// written or stored and its length reserved: Write appends past both, as
// MemFS's Write appends at the end of what its life wrote or reserved.
type reuseModel struct {
	live, durable     []byte
	written, reserved int
}

// put writes p at off, past the end too.
func (md *reuseModel) put(off int, p []byte) {
	if end := off + len(p); end > len(md.live) {
		md.live = append(md.live, make([]byte, end-len(md.live))...)
	}
	copy(md.live[off:], p)
}

// runReuseModel drives one MemFS file through lives begun by Reuse (and
// now and then Create) with random Writes, windows stored into, Truncates,
// Syncs and crashes, checking after each step what a reader, a machine
// crash and a process crash see. Sizes straddle fileData's chunks, where
// overlay shares or copies.
func runReuseModel(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 0))
	m := newCrashFS(t)
	md := &reuseModel{}
	names := []string{"/db/w0", "/db/w1", "/db/w2"}
	cur := names[0]
	f, _ := m.Create(cur)
	m.SyncDir("/db")
	fresh := byte(0) // a byte value per write, so a misplaced byte shows
	data := func(n int) []byte {
		fresh++
		return pattern(n, fresh)
	}
	size := func() int {
		switch r.IntN(8) {
		case 0:
			return chunkSize/2 + r.IntN(chunkSize)
		case 1, 2:
			return r.IntN(10)
		}
		return r.IntN(3 * memPageSize)
	}
	reuse := func(next string) {
		f.Close()
		f = mustReuse(t, m, cur, next)
		m.SyncDir("/db")
		cur = next
		md.written, md.reserved = 0, 0
	}
	for step := 0; step < steps; step++ {
		var what string
		switch op := r.IntN(10); op {
		case 0, 1, 2:
			p := data(size())
			what = fmt.Sprintf("write %d", len(p))
			mustWrite(t, f, p)
			at := max(md.written, md.reserved)
			md.put(at, p)
			md.written = at + len(p)
		case 3, 4:
			off := (md.written+memPageSize-1)/memPageSize*memPageSize + r.IntN(3)*memPageSize
			n := (1 + r.IntN(20)) * memPageSize
			what = fmt.Sprintf("map [%d, %d)", off, off+n)
			w, err := f.(Mapper).Map(int64(off), n)
			if err != nil {
				t.Fatalf("seed %d step %d: %s: %v", seed, step, what, err)
			}
			md.put(off+n, nil)
			md.reserved = max(md.reserved, off+n)
			if !bytes.Equal(w.Bytes(), md.live[off:off+n]) {
				t.Fatalf("seed %d step %d: %s: the window does not show the file's bytes", seed, step, what)
			}
			for stored := 0; stored < n && r.IntN(3) > 0; {
				k := stored + r.IntN(n-stored) + 1
				copy(w.Bytes()[stored:k], data(k-stored))
				w.Stored(k)
				md.put(off+stored, w.Bytes()[stored:k])
				md.written, stored = off+k, k
				what += fmt.Sprintf(", stored %d", k)
			}
			w.Unmap()
		case 5:
			n := r.IntN(len(md.live) + memPageSize + 1)
			what = fmt.Sprintf("truncate %d", n)
			if err := f.(Mapper).Truncate(int64(n)); err != nil {
				t.Fatal(err)
			}
			md.live = append(md.live[:min(n, len(md.live))], make([]byte, max(0, n-len(md.live)))...)
			md.written, md.reserved = min(md.written, n), n
		case 6:
			what = "sync"
			f.Sync()
			md.durable = slices.Clone(md.live)
		case 7:
			next := names[r.IntN(len(names))]
			what = "reuse as " + next
			reuse(next)
		case 8:
			what = "crash, reuse"
			f.Close()
			m = m.CrashClone()
			f = mustReuse(t, m, cur, cur)
			md.live = slices.Clone(md.durable)
			md.written, md.reserved = 0, 0
		case 9:
			if r.IntN(4) > 0 {
				what = "nothing"
				break
			}
			what = "create"
			f.Close()
			f, _ = m.Create(cur)
			md.live, md.written, md.reserved = nil, 0, 0
		}
		if got, _ := f.Size(); got != int64(len(md.live)) {
			t.Fatalf("seed %d step %d (%s): size %d, model %d", seed, step, what, got, len(md.live))
		}
		for _, c := range []struct {
			what string
			fs   *MemFS
			want []byte
		}{
			{"read", m, md.live},
			{"process crash", m.ProcessCrashClone(), md.live},
			{"crash", m.CrashClone(), md.durable},
		} {
			got, err := readAll(c.fs, cur)
			if err != nil {
				t.Fatalf("seed %d step %d (%s): %s: %v", seed, step, what, c.what, err)
			}
			if !bytes.Equal(got, c.want) {
				i := 0
				for i < min(len(got), len(c.want)) && got[i] == c.want[i] {
					i++
				}
				t.Fatalf("seed %d step %d (%s): %s: %d bytes, model %d, first difference at %d", seed, step, what, c.what, len(got), len(c.want), i)
			}
		}
	}
	f.Close()
}

// readAll is ReadFile in one ReadAt, which costs the race detector less
// than ReadAll's growing buffer.
func readAll(m *MemFS, name string) ([]byte, error) {
	f, err := m.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, _ := f.Size()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && size > 0 {
		return nil, err
	}
	return b, nil
}

// TestReuseModel runs random lives of a reused MemFS file against
// reuseModel. MONBAN_LONG=1 runs a hundred times more.
func TestReuseModel(t *testing.T) {
	forSeeds(t, 40, "runReuseModel(t, %d, 60)", func(t *testing.T, seed uint64) {
		runReuseModel(t, seed, 60)
	})
}
