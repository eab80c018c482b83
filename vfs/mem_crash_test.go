package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"weak"
)

// crashModel is what MemFS should hold, written the plainest way: one
// directory, inodes numbered, contents copied rather than shared.
type crashModel struct {
	live, synced  map[int][]byte // inode -> contents seen / made durable
	dir, durable  map[string]int // name -> inode, now and at the last SyncDir
	next          int
	handles       []modelHandle
	written, step int
	// changes are the directory's changes since its last SyncDir, each
	// with its number among all the MemFS recorded (dirChanges of them).
	changes    []modelChange
	dirChanges int
}

// modelChange is a directory change: name reaches inode ino, or nothing
// when ino is -1; a rename also takes from away.
type modelChange struct {
	i          int
	name, from string
	ino        int
}

func (md *crashModel) change(name string, ino int, from string) {
	md.changes = append(md.changes, modelChange{md.dirChanges, name, from, ino})
	md.dirChanges++
}

type modelHandle struct {
	ino int
	f   File
}

const crashDir = "/db"

var crashNames = []string{"a", "b", "c", "d"}

func newCrashModel() *crashModel {
	return &crashModel{live: map[int][]byte{}, synced: map[int][]byte{},
		dir: map[string]int{}, durable: map[string]int{}}
}

// newCrashFS returns a MemFS whose /db directory is itself durable.
func newCrashFS(t testing.TB) *MemFS {
	m := NewMem()
	if err := m.MkdirAll(crashDir); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return m
}

// runCrashOps interprets ops as a sequence of file-system calls on a MemFS
// and on the model, and after every crash checks that the clone holds
// exactly the model's durable state. Every byte sequence is a valid
// program, so the fuzzer can drive it.
func runCrashOps(t testing.TB, ops []byte) {
	m, md := newCrashFS(t), newCrashModel()
	md.dirChanges = m.DirChanges() // making /db
	next := func() byte {
		if len(ops) == 0 {
			return 0
		}
		b := ops[0]
		ops = ops[1:]
		return b
	}
	for len(ops) > 0 {
		md.step++
		op, arg := next(), next()
		name := crashDir + "/" + crashNames[arg%4]
		switch op % 8 {
		case 0: // create (truncating an existing inode, as O_TRUNC does)
			f, err := m.Create(name)
			if err != nil {
				t.Fatalf("step %d: create: %v", md.step, err)
			}
			ino, ok := md.dir[crashNames[arg%4]]
			if !ok {
				ino = md.next
				md.next++
				md.dir[crashNames[arg%4]] = ino
				md.change(crashNames[arg%4], ino, "")
			}
			md.live[ino] = nil
			md.handles = append(md.handles, modelHandle{ino, f})
		case 1, 2: // write; writes are common so that files grow
			if len(md.handles) == 0 {
				continue
			}
			h := md.handles[int(arg)%len(md.handles)]
			b := next()
			size := int(b % 24)
			if b == 255 { // now and then, across a chunk boundary
				size = chunkSize + 1
			}
			p := make([]byte, size)
			for i := range p {
				md.written++
				p[i] = byte(md.written)
			}
			if _, err := h.f.Write(p); err != nil {
				t.Fatalf("step %d: write: %v", md.step, err)
			}
			md.live[h.ino] = append(md.live[h.ino], p...)
		case 3: // sync a file
			if len(md.handles) == 0 {
				continue
			}
			h := md.handles[int(arg)%len(md.handles)]
			if err := h.f.Sync(); err != nil {
				t.Fatalf("step %d: sync: %v", md.step, err)
			}
			md.synced[h.ino] = slices.Clone(md.live[h.ino])
		case 4: // rename
			to := crashNames[next()%4]
			err := m.Rename(name, crashDir+"/"+to)
			ino, ok := md.dir[crashNames[arg%4]]
			if !ok {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("step %d: rename of a missing name: %v", md.step, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("step %d: rename: %v", md.step, err)
			}
			// Two names of one inode (a crash that kept a later rename
			// of a chain and not an earlier one leaves them): rename(2)
			// does nothing, as for the same name.
			if other, ok := md.dir[to]; !ok || other != ino {
				delete(md.dir, crashNames[arg%4])
				md.dir[to] = ino
				md.change(to, ino, crashNames[arg%4])
			}
		case 5: // remove
			err := m.Remove(name)
			if _, ok := md.dir[crashNames[arg%4]]; !ok {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("step %d: remove of a missing name: %v", md.step, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("step %d: remove: %v", md.step, err)
			}
			delete(md.dir, crashNames[arg%4])
			md.change(crashNames[arg%4], -1, "")
		case 6:
			if err := m.SyncDir(crashDir); err != nil {
				t.Fatalf("step %d: syncdir: %v", md.step, err)
			}
			md.durable = maps.Clone(md.dir)
			md.changes = nil
		case 7:
			m, md = crash(t, m, md, arg)
		}
		checkState(t, m, md.step, "live", md.dir, md.live)
	}
	crash(t, m, md, 0)
}

// crash takes the crash clone that keeps the directory changes the bits
// of keepBits pick (change i: bit i mod 8; 0 keeps none, as CrashClone),
// keeps writing through the old handles (a clone must not share anything
// writable with its source), checks the clone against the model's durable
// state with those changes, and a crash of a process-crash clone too, and
// carries on with both.
func crash(t testing.TB, m *MemFS, md *crashModel, keepBits byte) (*MemFS, *crashModel) {
	if m.DirChanges() != md.dirChanges {
		t.Fatalf("step %d: %d directory changes recorded, model %d", md.step, m.DirChanges(), md.dirChanges)
	}
	keep := func(i int) bool { return keepBits>>(i%8)&1 == 1 }
	kept := maps.Clone(md.durable)
	for _, c := range md.changes {
		switch {
		case !keep(c.i):
		case c.ino < 0:
			delete(kept, c.name)
		default:
			delete(kept, c.from)
			kept[c.name] = c.ino
		}
	}
	clone := m.CrashCloneKeeping(keep)
	checkState(t, m.ProcessCrashClone().CrashCloneKeeping(keep), md.step, "after a process crash, then a crash", kept, md.synced)
	for _, h := range md.handles {
		if _, err := h.f.Write([]byte("after the crash")); err != nil {
			t.Fatalf("step %d: write to the old fs: %v", md.step, err)
		}
	}
	checkState(t, clone, md.step, "after crash", kept, md.synced)
	next := newCrashModel()
	next.step, next.written = md.step, md.written
	for name, ino := range kept {
		if _, ok := next.live[ino]; !ok {
			next.live[ino] = slices.Clone(md.synced[ino])
			next.synced[ino] = slices.Clone(md.synced[ino])
		}
		next.dir[name], next.durable[name] = ino, ino
		next.next = max(next.next, ino+1)
	}
	return clone, next
}

func checkState(t testing.TB, m *MemFS, step int, what string, dir map[string]int, contents map[int][]byte) {
	names, err := m.List(crashDir)
	if err != nil {
		t.Fatalf("step %d: %s: list: %v", step, what, err)
	}
	if want := slices.Sorted(maps.Keys(dir)); !slices.Equal(names, want) {
		t.Fatalf("step %d: %s: names %q, model %q", step, what, names, want)
	}
	for _, name := range names {
		f, err := m.Open(crashDir + "/" + name)
		if err != nil {
			t.Fatalf("step %d: %s: %v", step, what, err)
		}
		size, _ := f.Size()
		got := make([]byte, size)
		f.ReadAt(got, 0)
		f.Close()
		if want := contents[dir[name]]; !bytes.Equal(got, want) {
			t.Fatalf("step %d: %s: %s holds %x, model %x", step, what, name, got, want)
		}
	}
}

func randomOps(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0))
	ops := make([]byte, n)
	for i := range ops {
		ops[i] = byte(r.Uint32())
	}
	return ops
}

// TestMemCrashModel runs random operation sequences, with crashes, against
// the model. MONBAN_LONG=1 runs a hundred times more.
func TestMemCrashModel(t *testing.T) {
	forSeeds(t, 300, "runCrashOps(t, randomOps(%d, 400))", func(t *testing.T, seed uint64) {
		runCrashOps(t, randomOps(seed, 400))
	})
}

// forSeeds runs body as a subtest for each of n random seeds (a hundred
// times more with MONBAN_LONG=1), and logs a failing one's seed with the
// call that reruns it, rerun formatted with the seed.
func forSeeds(t *testing.T, n uint64, rerun string, body func(t *testing.T, seed uint64)) {
	if os.Getenv("MONBAN_LONG") != "" {
		n *= 100
	}
	base := rand.Uint64()
	for i := uint64(0); i < n; i++ {
		seed := base + i
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("seed %d (rerun with %s)", seed, fmt.Sprintf(rerun, seed))
				}
			}()
			body(t, seed)
		})
	}
}

func FuzzMemCrash(f *testing.F) {
	for seed := uint64(1); seed <= 8; seed++ {
		f.Add(randomOps(seed, 200))
	}
	// Write, sync, rename over, syncdir, crash: the atomic-replace dance.
	f.Add([]byte{0, 0, 1, 0, 9, 3, 0, 4, 0, 1, 6, 0, 7, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 4096 {
			ops = ops[:4096]
		}
		runCrashOps(t, ops)
	})
}

// TestProcessCrashClone: a process crash keeps every name and byte
// written, synced or not; the clone is independent of the original; and
// what is durable is the same in both, so a machine crash of either
// leaves the same.
func TestProcessCrashClone(t *testing.T) {
	m := newCrashFS(t)
	write := func(fs *MemFS, name, data string, sync bool) {
		f, err := fs.Create(crashDir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	read := func(fs *MemFS, name string) string {
		f, err := fs.Open(crashDir + "/" + name)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		defer f.Close()
		b := make([]byte, 1<<20)
		n, _ := f.ReadAt(b, 0)
		return string(b[:n])
	}
	write(m, "a", "synced", true)
	if err := m.SyncDir(crashDir); err != nil {
		t.Fatal(err)
	}
	write(m, "b", "written", false)
	c := m.ProcessCrashClone()
	if read(c, "a") != "synced" || read(c, "b") != "written" {
		t.Fatalf("clone holds a=%q b=%q; want every byte written", read(c, "a"), read(c, "b"))
	}
	write(c, "b", "changed in the clone", false)
	if read(m, "b") != "written" {
		t.Fatalf("writing the clone changed the original: b=%q", read(m, "b"))
	}
	cm, cc := m.CrashClone(), m.ProcessCrashClone().CrashClone()
	for _, name := range []string{"a", "b"} {
		if read(cm, name) != read(cc, name) {
			t.Fatalf("after a machine crash %s is %q in the original, %q in the clone", name, read(cm, name), read(cc, name))
		}
	}
}

// TestCrashKeepingRenameAcrossDirs: a rename from one directory to another
// is one change, whose sides a SyncDir of either directory makes durable
// apart: with /a synced after it and /b not, a crash that keeps no
// unsynced change has the file in neither, one that keeps it has it in
// /b; with /b synced too, every crash has it there.
func TestCrashKeepingRenameAcrossDirs(t *testing.T) {
	m := renamedAcross(t, "/a")
	names := func(c *MemFS) string {
		a, _ := c.List("/a")
		b, _ := c.List("/b")
		return fmt.Sprint(a, b)
	}
	for keep, want := range map[bool]string{false: "[] []", true: "[] [y]"} {
		if got := names(m.CrashCloneKeeping(func(int) bool { return keep })); got != want {
			t.Errorf("/a synced, keeping unsynced changes %v: %s, want %s", keep, got, want)
		}
	}
	if err := m.SyncDir("/b"); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		if got := names(m.CrashCloneKeeping(func(int) bool { return keep })); got != "[] [y]" {
			t.Errorf("both synced, keeping unsynced changes %v: %s, want [] [y]", keep, got)
		}
	}
}

// TestSyncDirLetsRemovedFilesGo: the changes a crash may keep are held
// only until their directory's SyncDir, so a file removed and synced away
// is not kept alive by them: a MemFS that holds a long-running DB does not
// hold every file it ever deleted.
func TestSyncDirLetsRemovedFilesGo(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	w := weak.Make(m.root.live["d"].live["x"])
	for _, err := range []error{m.SyncDir("/d"), m.Remove("/d/x"), m.SyncDir("/d")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	f = nil
	runtime.GC()
	if w.Value() != nil {
		t.Fatal("a file removed and synced away is still reachable")
	}
	runtime.KeepAlive(m) // m alive: only what it holds may keep the file
}

// TestRenameBetweenTwoNamesOfOneFile: a crash can leave one file under two
// names (a rename across directories whose target directory alone was
// synced). Renaming one of them over the other then does nothing, as
// rename(2) does for two links to one file.
func TestRenameBetweenTwoNamesOfOneFile(t *testing.T) {
	c := renamedAcross(t, "/b").CrashClone()
	if err := c.Rename("/a/x", "/b/y"); err != nil {
		t.Fatal(err)
	}
	a, _ := c.List("/a")
	b, _ := c.List("/b")
	if fmt.Sprint(a, b) != "[x] [y]" {
		t.Fatalf("after renaming one name of a file over its other: %v %v, want [x] [y]", a, b)
	}
}

// renamedAcross returns a MemFS holding the synced file /a/x, durable in
// /a, renamed to /b/y, with only the directory synced made durable since.
func renamedAcross(t *testing.T, synced string) *MemFS {
	t.Helper()
	m := NewMem()
	for _, d := range []string{"/a", "/b"} {
		if err := m.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	f, err := m.Create("/a/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{f.Sync(), f.Close(), m.SyncDir("/"), m.SyncDir("/a"), m.SyncDir("/b"),
		m.Rename("/a/x", "/b/y"), m.SyncDir(synced)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}
