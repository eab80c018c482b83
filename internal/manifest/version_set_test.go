package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

const testDir = "db"

// driver produces random valid edits against a VersionSet and keeps a
// model of the levels (file number -> level) to check every Version with.
type driver struct {
	t     *testing.T
	rng   *rand.Rand
	vs    *VersionSet
	model map[uint64]int
	metas map[uint64]*FileMetadata
	seq   base.SeqNum
	// held are old Versions a "reader" still references.
	held []*Version
	// gone are tables reported obsolete: never reported twice, never live.
	gone map[uint64]bool
}

func newDriver(t *testing.T, rng *rand.Rand, vs *VersionSet) *driver {
	return &driver{t: t, rng: rng, vs: vs, model: map[uint64]int{}, metas: map[uint64]*FileMetadata{}, gone: map[uint64]bool{}}
}

// newTable makes a table. L1+ tables get a user-key range of their own
// ("%08d-a".."%08d-z" by number), so any level can take them without
// overlap; L0 tables get random ranges that overlap freely.
func (d *driver) newTable(level int) *FileMetadata {
	num := d.vs.NextFileNum()
	d.seq += base.SeqNum(1 + d.rng.IntN(100))
	lo, hi := fmt.Sprintf("%08d-a", num), fmt.Sprintf("%08d-z", num)
	if level == 0 {
		a, b := d.rng.IntN(1000), d.rng.IntN(1000)
		lo, hi = fmt.Sprintf("%08d", min(a, b)), fmt.Sprintf("%08d", max(a, b))
	}
	m := tableFor(num, lo, hi, d.seq)
	m.SmallestSeq = d.seq - base.SeqNum(d.rng.IntN(int(d.seq)))
	return m
}

// randEdit picks a flush, a compaction, a move or a log switch.
func (d *driver) randEdit() *VersionEdit {
	e := &VersionEdit{Deleted: map[DeletedFile]bool{}}
	switch d.rng.IntN(4) {
	case 0: // flush: a new WAL and an L0 table
		e.LogNum = d.vs.NextFileNum()
		e.Added = append(e.Added, NewFile{Level: 0, Meta: d.newTable(0)})
	case 1: // compaction: some tables of level n into new tables of n+1
		level := d.rng.IntN(NumLevels - 1)
		for num, l := range d.model {
			if l == level && d.rng.IntN(2) == 0 {
				e.Deleted[DeletedFile{Level: l, FileNum: num}] = true
			}
		}
		for range d.rng.IntN(3) {
			e.Added = append(e.Added, NewFile{Level: level + 1, Meta: d.newTable(level + 1)})
		}
		if d.rng.IntN(2) == 0 {
			e.CompactPointers = []CompactPointer{{Level: level, Key: ikey(fmt.Sprint(d.rng.IntN(100)), d.seq)}}
		}
	case 2: // move an L1+ table one level down, same metadata
		for num, l := range d.model {
			if l > 0 && l < NumLevels-1 {
				e.Deleted[DeletedFile{Level: l, FileNum: num}] = true
				e.Added = append(e.Added, NewFile{Level: l + 1, Meta: d.metas[num]})
				break
			}
		}
	case 3:
		d.seq += 1000
		d.vs.SetLastSeq(d.seq)
	}
	return e
}

func (d *driver) apply(e *VersionEdit) {
	d.t.Helper()
	if err := d.vs.LogAndApply(e); err != nil {
		d.t.Fatalf("LogAndApply: %v", err)
	}
	for df := range e.Deleted {
		delete(d.model, df.FileNum)
	}
	for _, nf := range e.Added {
		d.model[nf.Meta.FileNum] = nf.Level
		d.metas[nf.Meta.FileNum] = nf.Meta
	}
}

// check compares the current Version with the model, and the obsolete
// tracking with the Versions held.
func (d *driver) check() {
	d.t.Helper()
	v := d.vs.Current()
	defer v.Unref()
	got := map[uint64]int{}
	for level, files := range v.Levels {
		if err := checkLevel(level, files); err != nil {
			d.t.Fatal(err)
		}
		for _, f := range files {
			got[f.FileNum] = level
		}
	}
	if !maps.Equal(got, d.model) {
		d.t.Fatalf("version %v\nmodel %v", got, d.model)
	}
	want := maps.Clone(d.model)
	for _, h := range d.held {
		for _, files := range h.Levels {
			for _, f := range files {
				want[f.FileNum] = 0
			}
		}
	}
	live := d.vs.LiveFiles()
	if !maps.Equal(maps.Collect(func(yield func(uint64, bool) bool) {
		for k := range want {
			if !yield(k, true) {
				return
			}
		}
	}), live) {
		d.t.Fatalf("LiveFiles %v, want the tables of current and held versions %v", slices.Sorted(maps.Keys(live)), slices.Sorted(maps.Keys(want)))
	}
	for _, f := range d.vs.TakeObsolete() {
		if d.gone[f.FileNum] || live[f.FileNum] {
			d.t.Fatalf("table %06d reported obsolete twice or while live", f.FileNum)
		}
		d.gone[f.FileNum] = true
	}
}

// step applies one random edit, sometimes holding or releasing a Version
// as an iterator would.
func (d *driver) step() {
	if d.rng.IntN(3) == 0 {
		d.held = append(d.held, d.vs.Current())
	}
	d.apply(d.randEdit())
	if len(d.held) > 0 && d.rng.IntN(2) == 0 {
		i := d.rng.IntN(len(d.held))
		d.held[i].Unref()
		d.held = slices.Delete(d.held, i, i+1)
	}
	d.check()
}

func (d *driver) releaseAll() {
	for _, h := range d.held {
		h.Unref()
	}
	d.held = nil
}

func manifests(t *testing.T, fsys vfs.FS) []string {
	names, err := fsys.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if k, _, ok := ParseFilename(n); ok && k == KindManifest {
			out = append(out, n)
		}
	}
	return out
}

// randManifestLimit makes a set roll over on nearly every edit or on a
// few of them, so that both the append and the rollover paths run.
func randManifestLimit(rng *rand.Rand) int64 {
	if rng.IntN(2) == 0 {
		return int64(256 + rng.IntN(2048))
	}
	return int64(4<<10 + rng.IntN(64<<10))
}

// TestVersionSetModel applies long random edit sequences, closing and
// recovering now and then, with a small manifest limit so that rollovers
// happen constantly, and checks the state after every step.
func TestVersionSetModel(t *testing.T) {
	rng := newRNG(t)
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.SetMaxManifestSize(randManifestLimit(rng))
	d := newDriver(t, rng, vs)
	rollovers := 0
	for i := range 1500 {
		before := vs.ManifestFileNum()
		d.step()
		if vs.ManifestFileNum() != before {
			rollovers++
		}
		if rng.IntN(100) == 0 {
			lastSeq, logNum, next := vs.LastSeq(), vs.LogNum(), vs.nextFileNum.Load()
			d.releaseAll()
			if err := vs.Close(); err != nil {
				t.Fatal(err)
			}
			if vs, err = Recover(mem, testDir); err != nil {
				t.Fatalf("step %d: recover: %v", i, err)
			}
			vs.SetMaxManifestSize(randManifestLimit(rng))
			d.vs = vs
			if vs.LastSeq() != lastSeq || vs.LogNum() != logNum || vs.nextFileNum.Load() != next {
				t.Fatalf("recovered counters seq %d log %d next %d, want %d %d %d",
					vs.LastSeq(), vs.LogNum(), vs.nextFileNum.Load(), lastSeq, logNum, next)
			}
			d.check()
		}
		if m := manifests(t, mem); len(m) != 1 || m[0] != MakeFilename(KindManifest, vs.ManifestFileNum()) {
			t.Fatalf("step %d: manifests on disk %v, want only %06d", i, m, vs.ManifestFileNum())
		}
	}
	if rollovers == 0 {
		t.Fatal("no rollover happened")
	}
	t.Logf("%d rollovers", rollovers)
}

func TestObsoleteWaitsForReaders(t *testing.T) {
	vs, num := setWithOneTable(t)
	reader := vs.Current()
	if err := vs.LogAndApply(&VersionEdit{Deleted: map[DeletedFile]bool{{Level: 0, FileNum: num}: true}}); err != nil {
		t.Fatal(err)
	}
	if got := vs.TakeObsolete(); len(got) != 0 || !vs.LiveFiles()[num] {
		t.Fatalf("table obsolete (%v) while a reader holds its version", got)
	}
	reader.Unref()
	if got := vs.TakeObsolete(); len(got) != 1 || got[0].FileNum != num || vs.LiveFiles()[num] {
		t.Fatalf("after the reader left: obsolete %v, live %v", got, vs.LiveFiles())
	}
}

func TestLogAndApplyRejectsInvalid(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	a := vs.NextFileNum()
	if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 1, Meta: tableFor(a, "a", "m", 1)}}}); err != nil {
		t.Fatal(err)
	}
	size := vs.manifest.Size()
	for name, e := range map[string]*VersionEdit{
		"overlap":       {Added: []NewFile{{Level: 1, Meta: tableFor(vs.NextFileNum(), "m", "z", 1)}}},
		"unallocated":   {Added: []NewFile{{Level: 2, Meta: tableFor(1000, "a", "b", 1)}}},
		"log backwards": {LogNum: 0},
		"delete absent": {Deleted: map[DeletedFile]bool{{Level: 3, FileNum: a}: true}},
	} {
		if name == "log backwards" {
			// Move the log number forward first, then try to go back.
			if err := vs.LogAndApply(&VersionEdit{LogNum: vs.NextFileNum()}); err != nil {
				t.Fatal(err)
			}
			size = vs.manifest.Size()
			e.LogNum = 1
		}
		if err := vs.LogAndApply(e); !errors.Is(err, ErrInvalidEdit) {
			t.Errorf("%s: err = %v, want ErrInvalidEdit", name, err)
		}
		if vs.manifest.Size() != size {
			t.Errorf("%s: rejected edit was written", name)
		}
	}
	// The set is still usable.
	if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 2, Meta: tableFor(vs.NextFileNum(), "a", "b", 1)}}}); err != nil {
		t.Fatal(err)
	}
	if err := vs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := vs.LogAndApply(&VersionEdit{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestWriteErrorIsSticky(t *testing.T) {
	fault := vfs.NewFault(vfs.NewMem())
	vs, err := Create(fault, testDir)
	if err != nil {
		t.Fatal(err)
	}
	fault.FailNth(vfs.OpSync, 1)
	err = vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: tableFor(vs.NextFileNum(), "a", "b", 1)}}})
	if !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("err = %v, want the injected sync failure", err)
	}
	v := vs.Current()
	defer v.Unref()
	if v.NumFiles(0) != 0 {
		t.Fatal("a Version was installed although its edit did not sync")
	}
	if err2 := vs.LogAndApply(&VersionEdit{}); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second call: %v, want the sticky %v", err2, err)
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.Close()
	if _, err := Create(mem, testDir); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create: %v, want fs.ErrExist", err)
	}
	if _, err := Recover(vfs.NewMem(), testDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Recover of nothing: %v, want fs.ErrNotExist", err)
	}
}

// TestCreateStopsOnADiskError: a disk that fails the look for CURRENT
// says nothing of whether a DB is there, so Create stops with that error
// and writes nothing; it took the failure for "no CURRENT" and went on.
func TestCreateStopsOnADiskError(t *testing.T) {
	ff := vfs.NewFault(vfs.NewMem())
	ff.Inject(vfs.Fault{Op: vfs.OpOpen, Match: vfs.MatchBase(currentName), Nth: 1, Err: syscall.EIO})
	if vs, err := Create(ff, testDir); !errors.Is(err, syscall.EIO) {
		if err == nil {
			vs.Close()
		}
		t.Fatalf("Create when CURRENT cannot be looked for: %v, want EIO", err)
	}
	if names, _ := ff.List(testDir); len(names) != 0 {
		t.Fatalf("Create that failed left %v", names)
	}
}

// readFile and writeFile edit files behind the VersionSet's back.
func readFile(t testing.TB, fsys vfs.FS, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, fsys vfs.FS, name string, b []byte) {
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// buildDB creates a DB with n flushes and returns its file system, the
// Version after n-1 and after n edits, and the manifest's path.
func buildDB(t testing.TB, n int) (mem *vfs.MemFS, prev, last *Version, manifestPath string) {
	mem = vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if i == n-1 {
			prev = vs.Current()
		}
		if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: tableFor(vs.NextFileNum(), "a", "z", base.SeqNum(i+1))}}}); err != nil {
			t.Fatal(err)
		}
	}
	last = vs.Current()
	manifestPath = testDir + "/" + MakeFilename(KindManifest, vs.ManifestFileNum())
	vs.Close()
	return mem, prev, last, manifestPath
}

func TestTornManifestTail(t *testing.T) {
	mem, prev, last, path := buildDB(t, 5)
	full := readFile(t, mem, path)
	// Recovering the intact manifest gives the last state.
	vs, err := Recover(mem.CrashClone(), testDir)
	if err != nil {
		t.Fatal(err)
	}
	assertVersion(t, vs, last)
	// Cutting into the last record drops exactly that edit.
	for cut := 1; cut < 12; cut++ {
		torn := mem.CrashClone()
		writeFile(t, torn, path, full[:len(full)-cut])
		vs, err := Recover(torn, testDir)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		assertVersion(t, vs, prev)
		if vs.RecoveredDroppedBytes() == 0 {
			t.Errorf("cut %d: no dropped bytes reported", cut)
		}
		// The new manifest does not inherit the torn tail: recover again.
		vs.Close()
		vs, err = Recover(torn, testDir)
		if err != nil {
			t.Fatalf("cut %d, second recovery: %v", cut, err)
		}
		assertVersion(t, vs, prev)
	}
}

func assertVersion(t *testing.T, vs *VersionSet, want *Version) {
	t.Helper()
	v := vs.Current()
	defer v.Unref()
	if err := versionsEqual(v, want); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptManifest(t *testing.T) {
	mem, _, _, path := buildDB(t, 5)
	full := readFile(t, mem, path)
	name := path[strings.LastIndexByte(path, '/')+1:]
	// A flipped byte in an early record, with intact records after it, is
	// corruption, not a torn tail.
	for _, off := range []int{3, 10, 20, len(full) / 2} {
		bad := mem.CrashClone()
		b := slices.Clone(full)
		b[off] ^= 0x40
		writeFile(t, bad, path, b)
		_, err := Recover(bad, testDir)
		if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), name) {
			t.Errorf("flip at %d: err = %v, want ErrCorruption naming %s", off, err, name)
		}
	}
}

func TestBadCurrent(t *testing.T) {
	for contents, want := range map[string]string{
		"MANIFEST-000099\n":       "MANIFEST-000099",
		"MANIFEST-000001":         "CURRENT",
		"000001.log\n":            "CURRENT",
		"":                        "CURRENT",
		strings.Repeat("x", 1000): "CURRENT",
	} {
		mem, _, _, _ := buildDB(t, 1)
		writeFile(t, mem, testDir+"/CURRENT", []byte(contents))
		_, err := Recover(mem, testDir)
		if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), want) {
			t.Errorf("CURRENT %.20q: err = %v, want ErrCorruption naming %s", contents, err, want)
		}
	}
}

// TestManifestIsWritten: the manifest is written, not mapped, even on a
// file system that maps (log_and_apply.go, unmapped): an open manifest
// has no reserved zeros after its last record.
func TestManifestIsWritten(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	defer vs.Close()
	f, err := mem.Open(filepath.Join(testDir, MakeFilename(KindManifest, vs.ManifestFileNum())))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if size, err := f.Size(); err != nil || size != vs.manifest.Size() {
		t.Fatalf("open manifest of %d bytes (%v), %d appended: it was mapped", size, err, vs.manifest.Size())
	}
}

// TestCloseReleasesCurrentNotItsFiles: Close drops the set's reference to
// the current Version, so its tables' metadata lets go of their filters
// when the last reader does, but a table that leaves the last live
// Version after Close is not obsolete: the manifest still names it.
func TestCloseReleasesCurrentNotItsFiles(t *testing.T) {
	vs, num := setWithOneTable(t)
	reader := vs.Current()
	if err := vs.Close(); err != nil {
		t.Fatal(err)
	}
	if v := vs.Current(); v != nil {
		t.Fatalf("Current after Close = %v, want nil", v)
	}
	if !vs.LiveFiles()[num] {
		t.Fatal("the reader's table left the live files while the reader holds it")
	}
	reader.Unref()
	if got := vs.TakeObsolete(); len(got) != 0 {
		t.Fatalf("after Close, tables the manifest names were called obsolete: %v", got)
	}
	if live := vs.LiveFiles(); len(live) != 0 {
		t.Fatalf("live files after the last reader left a closed set: %v", live)
	}
}

// TestPlacementsModel checks TrackPlacements and TakeLeftPlacements
// against the Versions a driver holds: the placements returned at the
// start, plus each new current Version's, minus those reported left, are
// at every step exactly the placements of the current and held Versions.
// Moves (a table one level down, same file) make a placement leave while
// its table stays live.
func TestPlacementsModel(t *testing.T) {
	vs, err := Create(vfs.NewMem(), testDir)
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, newRNG(t), vs)
	for range 20 {
		d.step() // Versions held before tracking starts count too
	}
	tracked := map[placementKey]bool{}
	for _, p := range vs.TrackPlacements() {
		k := placementKey{p.Level, p.File.FileNum}
		if tracked[k] {
			t.Fatalf("TrackPlacements returned %v twice", k)
		}
		tracked[k] = true
	}
	if again := vs.TrackPlacements(); again != nil {
		t.Fatalf("a second TrackPlacements returned %d placements", len(again))
	}
	placements := func(v *Version, into map[placementKey]bool) {
		for level, files := range v.Levels {
			for _, f := range files {
				into[placementKey{level, f.FileNum}] = true
			}
		}
	}
	for i := range 400 {
		d.step()
		cur := vs.Current()
		placements(cur, tracked)
		want := map[placementKey]bool{}
		placements(cur, want)
		cur.Unref()
		for _, h := range d.held {
			placements(h, want)
		}
		for _, p := range vs.TakeLeftPlacements() {
			k := placementKey{p.Level, p.File.FileNum}
			if !tracked[k] || want[k] {
				t.Fatalf("step %d: %v reported left, tracked %v, still held %v", i, k, tracked[k], want[k])
			}
			delete(tracked, k)
		}
		if !maps.Equal(tracked, want) {
			t.Fatalf("step %d: tracked %v\nwant %v", i, tracked, want)
		}
	}
	d.releaseAll()
	if err := vs.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReserve: NextFileNum passes over reserved numbers and still gives
// the ones below them, against a model of the numbers given; a reserved
// number past the limit of the range costs nothing below it.
func TestReserve(t *testing.T) {
	vs, err := Create(vfs.NewMem(), testDir)
	if err != nil {
		t.Fatal(err)
	}
	defer vs.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	reserved := map[uint64]bool{}
	given := map[uint64]bool{}
	next := vs.NextFileNum()
	given[next] = true
	vs.Reserve(maxFileNum)
	reserved[maxFileNum] = true
	for range 2000 {
		if rng.IntN(3) == 0 {
			n := next + 1 + uint64(rng.IntN(20))
			vs.Reserve(n)
			reserved[n] = true
			continue
		}
		want := next + 1
		for reserved[want] || given[want] {
			want++
		}
		got := vs.NextFileNum()
		if got != want {
			t.Fatalf("NextFileNum = %d; want %d, the lowest number above %d neither given nor reserved", got, want, next)
		}
		given[got], next = true, got
	}
	if next > maxFileNum/2 {
		t.Fatalf("numbers reached %d: a reserved number carried them", next)
	}
}
