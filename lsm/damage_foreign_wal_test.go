package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// twoDBs writes n synced keys into each of /db and /other, both left with
// their writes in their live WAL, and returns what each holds and the name
// of the live WAL, the same in both: DBs made alike number their files
// alike.
func twoDBs(t *testing.T, fs vfs.FS, n int) (db, other model, live string) {
	t.Helper()
	fill := func(dir string) model {
		d, err := Open(dir, &Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		for i := range n {
			k := fmt.Sprintf("%s%03d", dir[1:], i)
			if err := d.Put([]byte(k), []byte(k), Sync); err != nil {
				t.Fatal(err)
			}
			m[k] = k
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	db, other = fill("/db"), fill("/other")
	logs, others := filesOf(t, fs, "/db", manifest.KindLog), filesOf(t, fs, "/other", manifest.KindLog)
	if len(logs) != 1 || !slices.Equal(logs, others) {
		t.Fatalf("logs: /db %v, /other %v; want the same one in each", logs, others)
	}
	return db, other, logs[0]
}

// TestAnotherDBsWALIsRefused: a WAL copied from another DB under the
// live WAL's name verified, for its checksums are seeded with its number
// and offsets alone, and Open replayed the other DB's writes as this
// one's, whose synced writes the file had held were gone without a word.
// Open must refuse it and change nothing; with the DB's own file put
// back, it recovers every write.
func TestAnotherDBsWALIsRefused(t *testing.T) {
	fs := vfs.NewMem()
	want, _, live := twoDBs(t, fs, 20)
	own := readFile(t, fs, "/db/"+live)
	rewrite(t, fs, "/db/"+live, readFile(t, fs, "/other/"+live))
	before := dirFiles(t, fs, "/db")
	_, err := Open("/db", &Options{FS: fs})
	refused(t, err, true, live)
	unchanged(t, fs, before)

	// Repair sets it aside, merging nothing of the other DB's.
	rep := repairedTo(t, fs.ProcessCrashClone(), model{})
	if f := fileReport(rep, live); f == nil || f.Fate != FateNotMonban {
		t.Errorf("Repair: %s: %+v; want it set aside as not this DB's\n%v", live, f, rep)
	}

	rewrite(t, fs, "/db/"+live, own)
	d, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Fatalf("with its own WAL put back:\n%s", diffModels(got, want))
	}
}

// fileReport returns what Repair's report says of the file name.
func fileReport(rep *RepairReport, name string) *RepairedFile {
	for i := range rep.Files {
		if rep.Files[i].Name == name {
			return &rep.Files[i]
		}
	}
	return nil
}

// manifestWithoutAnID returns a MemFS whose /db holds the manifest of a
// new DB, created and never opened, so without a DB id: what a DB written
// before DB ids has too.
func manifestWithoutAnID(t *testing.T) vfs.FS {
	t.Helper()
	fs := vfs.NewMem()
	vs, err := manifest.Create(fs, "/db")
	if err != nil {
		t.Fatal(err)
	}
	vs.Close()
	return fs
}

// oldWAL returns a WAL as monban wrote it before DB ids: log num holding
// one batch that sets k to v at sequence number seq, then the records
// more, and no identity.
func oldWAL(t *testing.T, fs vfs.FS, num uint64, seq uint64, k, v string, more ...[]byte) {
	t.Helper()
	writeOldWAL(t, fs, num, seq, k, v, false, more...)
}

// writeOldWAL is oldWAL, sealed if seal, as a rotation leaves a WAL.
func writeOldWAL(t *testing.T, fs vfs.FS, num uint64, seq uint64, k, v string, seal bool, more ...[]byte) {
	t.Helper()
	f, err := fs.Create(fmt.Sprintf("/db/%06d.log", num))
	if err != nil {
		t.Fatal(err)
	}
	w := wal.NewRecyclableWriter(f, num)
	rec := binary.LittleEndian.AppendUint64(nil, seq)
	rec = binary.LittleEndian.AppendUint32(rec, 1)
	rec = append(rec, byte(base.KindSet), byte(len(k)))
	rec = append(append(rec, k...), byte(len(v)))
	rec = append(rec, v...)
	for _, r := range append([][]byte{rec}, more...) {
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if seal {
		if err := w.Seal(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestADBWithoutAnIdentityGetsOne: a DB written before DB ids (a manifest
// without one, a WAL without an identity record) opens, replays its WAL,
// and its first Open records an id, which the WALs written from then on
// begin with; a WAL without it under a live WAL's name is then refused.
func TestADBWithoutAnIdentityGetsOne(t *testing.T) {
	fs := manifestWithoutAnID(t)
	oldWAL(t, fs, 2, 1, "k", "old")
	d := openMem(t, fs, nil)
	mustGet(t, d, "k", "old")
	if err := d.Put([]byte("k2"), []byte("new"), Sync); err != nil {
		t.Fatal(err)
	}
	id := d.vs.DBID()
	if id == 0 {
		t.Fatal("the first Open recorded no DB id")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	mustGet(t, d, "k2", "new")
	if d.vs.DBID() != id {
		t.Fatalf("reopened with DB id %016x, want %016x", d.vs.DBID(), id)
	}
	logs := filesOf(t, fs, "/db", manifest.KindLog)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	num, _ := strconv.ParseUint(strings.TrimSuffix(logs[len(logs)-1], ".log"), 10, 64)
	oldWAL(t, fs, num, 100, "k3", "stranger")
	_, err := Open("/db", &Options{FS: fs})
	refused(t, err, true, logs[len(logs)-1])
}

// TestAnIdentityAfterTheFirstRecordIsDamage: only a WAL's first record is
// its identity; one further on, in a record that verifies, is no batch
// monban writes.
func TestAnIdentityAfterTheFirstRecordIsDamage(t *testing.T) {
	fs := manifestWithoutAnID(t)
	oldWAL(t, fs, 2, 1, "k", "v", appendWALIdentity(nil, 7))
	_, err := Open("/db", &Options{FS: fs})
	refused(t, err, false, "000002.log")
}

// TestAFileNotThisDBsUnderTheLiveWALsName: a file in which no record of
// the live WAL's verifies read as a WAL a crash had left empty, and Open
// went on without the writes the live WAL had held, then deleted the
// file (a black-box attack found it): another program's file, or another
// DB's WAL of another number, whose records verify under that number
// alone. Once the manifest has a DB id, a live WAL holding no record must
// be what a crash leaves of one the DB began: the identity's frame cut
// short, then zeros or an older log's bytes.
func TestAFileNotThisDBsUnderTheLiveWALsName(t *testing.T) {
	for _, c := range []struct {
		name    string
		content func(t *testing.T, fs vfs.FS, live string) []byte
	}{
		{"text", func(*testing.T, vfs.FS, string) []byte { return []byte("my notes: not a database file, please keep\n") }},
		{"another DB's WAL of another number", func(t *testing.T, fs vfs.FS, live string) []byte {
			d, err := Open("/other", &Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Put([]byte("flushed"), []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := d.Flush(); err != nil { // moves its WAL number past the live one's
				t.Fatal(err)
			}
			if err := d.Put([]byte("theirs"), []byte("x"), Sync); err != nil {
				t.Fatal(err)
			}
			d.Close()
			logs := filesOf(t, fs, "/other", manifest.KindLog)
			other := logs[len(logs)-1]
			if other == live {
				t.Fatalf("the other DB's WAL is %s too", other)
			}
			return readFile(t, fs, "/other/"+other)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			d := openMem(t, fs, nil)
			if err := d.Put([]byte("acked"), []byte("v"), Sync); err != nil {
				t.Fatal(err)
			}
			d.Close()
			logs := filesOf(t, fs, "/db", manifest.KindLog)
			live := logs[len(logs)-1]
			rewrite(t, fs, "/db/"+live, c.content(t, fs, live))
			before := dirFiles(t, fs, "/db")
			for _, ro := range []bool{true, false} {
				_, err := Open("/db", &Options{FS: fs, ReadOnly: ro})
				refused(t, err, true, live)
				unchanged(t, fs, before)
			}
		})
	}
}

// TestWhatACrashLeavesOfANewWAL: a crash before a new WAL's identity
// record reached the disk leaves a prefix of its frame, then zeros (a new
// file) or the older log's bytes (a recycled one); Open takes each for an
// empty WAL, and nothing else.
func TestWhatACrashLeavesOfANewWAL(t *testing.T) {
	const id, num = 0x1122334455667788, 9
	frame := wal.FirstRecordFrame(num, appendWALIdentity(nil, id))
	olderFile := func(older, id uint64) []byte {
		mem := vfs.NewMem()
		f, err := mem.Create("/older")
		if err != nil {
			t.Fatal(err)
		}
		w := wal.NewRecyclableWriter(f, older)
		for _, r := range [][]byte{appendWALIdentity(nil, id), []byte("0123456789abcdef older record")} {
			if _, err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		return readFile(t, mem, "/older")
	}
	for _, c := range []struct {
		name string
		file []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"zeros", make([]byte, 4096), true},
		{"half the identity, then zeros", append(slices.Clone(frame[:9]), make([]byte, 100)...), true},
		{"an older log of this DB", olderFile(7, id), true},
		{"half the identity over an older log of this DB", append(slices.Clone(frame[:9]), olderFile(7, id)[9:]...), true},
		{"half the identity, then a byte", append(slices.Clone(frame[:9]), 1), false},
		{"a later log's file", olderFile(12, id), false},
		{"an older log of another DB", olderFile(7, id+1), false},
	} {
		fs := vfs.NewMem()
		rewrite(t, fs, "/wal", c.file)
		f, err := fs.Open("/wal")
		if err != nil {
			t.Fatal(err)
		}
		err = checkUnidentifiedWAL(f, "000009.log", num, id)
		f.Close()
		if (err == nil) != c.ok {
			t.Errorf("%s: %v; want accepted %v", c.name, err, c.ok)
		}
	}
}

// TestWALsWhoseSequenceNumbersOverlap: a WAL copied in beside the DB's own
// holds sequence numbers they hold too. A read-only Open failed with the
// memtable's "duplicate" error, which wraps no sentinel, and a read-write
// Open replayed both, one DB of two histories (a black-box attack found
// both). Sequence numbers rise along the WALs, from record to record and
// from one WAL to the next; Open refuses WALs where they do not.
func TestWALsWhoseSequenceNumbersOverlap(t *testing.T) {
	back := binary.LittleEndian.AppendUint64(nil, 1)
	back = binary.LittleEndian.AppendUint32(back, 1)
	back = append(back, byte(base.KindSet), 1, 'j', 1, 'x')
	for _, c := range []struct {
		name   string
		second func(fs vfs.FS)
	}{
		{"the same key", func(fs vfs.FS) { oldWAL(t, fs, 3, 1, "k", "copied") }},
		{"another key", func(fs vfs.FS) { oldWAL(t, fs, 3, 1, "j", "copied") }},
		{"going back within a WAL", func(fs vfs.FS) { oldWAL(t, fs, 3, 5, "k2", "v", back) }},
	} {
		for _, ro := range []bool{true, false} {
			fs := manifestWithoutAnID(t)
			writeOldWAL(t, fs, 2, 1, "k", "own", true)
			c.second(fs)
			before := dirFiles(t, fs, "/db")
			_, err := Open("/db", &Options{FS: fs, ReadOnly: ro})
			if !errors.Is(err, ErrCorruption) {
				t.Errorf("%s, read-only %v: Open %v; want ErrCorruption", c.name, ro, err)
			}
			unchanged(t, fs, before)
		}
	}
}

// TestAFileNotThisDBsUnderAnObsoleteWALsName: Open deletes the WALs below
// the log number, which the manifest proves obsolete if they are this
// DB's; it deleted by name, a text file or another DB's WAL too (a
// black-box attack found it). What it cannot tell is the DB's it leaves.
func TestAFileNotThisDBsUnderAnObsoleteWALsName(t *testing.T) {
	for _, c := range []struct {
		name string
		file func(fs vfs.FS, own []byte) (string, []byte)
		kept bool
	}{
		{"text", func(vfs.FS, []byte) (string, []byte) {
			return "000001.log", []byte("my notes: not a database file, please keep\n")
		}, true},
		{"another DB's WAL", func(fs vfs.FS, _ []byte) (string, []byte) {
			return "000002.log", readFile(t, fs, "/other/000002.log")
		}, true},
		{"this DB's, a crash left", func(_ vfs.FS, own []byte) (string, []byte) { return "000002.log", own }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			twoDBs(t, fs, 5) // each with its live WAL 000002.log
			own := readFile(t, fs, "/db/000002.log")
			d := openMem(t, fs, nil) // replays WAL 2 and moves the log number past it
			d.Close()
			name, b := c.file(fs, own)
			rewrite(t, fs, "/db/"+name, b)
			d = openMem(t, fs, nil)
			d.Close()
			_, err := fs.Open("/db/" + name)
			if kept := err == nil; kept != c.kept {
				t.Errorf("%s below the log number: kept %v, want %v", name, kept, c.kept)
			}
		})
	}
}

// TestRepairDistrustsAnotherDBsManifest: another DB's manifest copied in,
// with its CURRENT, named this DB's tables by their names, which a DB
// made alike shares; Repair trusted it, since every file it names was
// there, set each table aside as holding an id it names for no table, and
// made an empty DB (a black-box attack found it). A manifest none of whose
// tables that read is the table it names is another DB's.
func TestRepairDistrustsAnotherDBsManifest(t *testing.T) {
	fs := vfs.NewMem()
	fill := func(dir string) model {
		// No compaction: both DBs keep the same tables under the same names.
		d, err := Open(dir, &Options{FS: fs, L0CompactionThreshold: 50, L0SlowdownWritesThreshold: 60, L0StopWritesThreshold: 70})
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		for i := range 40 {
			k := fmt.Sprintf("%s%03d", dir[1:], i)
			if err := d.Put([]byte(k), []byte(k)); err != nil {
				t.Fatal(err)
			}
			m[k] = k
			if i%10 == 9 {
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := fill("/db")
	fill("/other")
	manifests := filesOf(t, fs, "/db", manifest.KindManifest)
	if !slices.Equal(manifests, filesOf(t, fs, "/other", manifest.KindManifest)) {
		t.Fatalf("manifests %v and %v: want the same names", manifests, filesOf(t, fs, "/other", manifest.KindManifest))
	}
	for _, name := range append(manifests, "CURRENT") {
		rewrite(t, fs, "/db/"+name, readFile(t, fs, "/other/"+name))
	}
	rep := repairedTo(t, fs, want)
	if rep.TrustedManifest != "" {
		t.Errorf("Repair trusted %s, the other DB's", rep.TrustedManifest)
	}
}

// TestALiveWALDeletedOutright: with WALs live on either side of it
// (flushes held back), a WAL deleted outright left no trace Open looked
// for, and it opened with the later WALs' commits and without the deleted
// one's, a state no prefix of the commits ever had; the newest deleted
// left a directory that read as a clean Close's (the WAL before it
// sealed, nothing after), its commits gone without a word. Sequence
// numbers run on from one WAL to the next, so a gap shows the first; a
// rotation ends the WAL it retires with a record naming the WAL that took
// over, which must be there, which shows the second.
func TestALiveWALDeletedOutright(t *testing.T) {
	for _, deleted := range []int{1, 2} {
		for _, ro := range []bool{true, false} {
			mem, logs := threeLiveWALs(t, "/db", "k")
			if err := mem.Remove("/db/" + logs[deleted]); err != nil {
				t.Fatal(err)
			}
			before := dirFiles(t, mem, "/db")
			d, err := Open("/db", &Options{FS: mem, ReadOnly: ro})
			if err == nil {
				d.Close()
			}
			if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), logs[deleted]) {
				t.Errorf("WAL %d of 3 deleted, read-only %v: Open %v; want ErrCorruption naming %s", deleted+1, ro, err, logs[deleted])
			}
			unchanged(t, mem, before)
		}
	}
}

// TestASuccessorRecordEndsItsWAL: the record naming the WAL that took
// over is a WAL's last; a batch after it is damage.
func TestASuccessorRecordEndsItsWAL(t *testing.T) {
	fs := manifestWithoutAnID(t)
	oldWAL(t, fs, 2, 1, "k", "v", appendWALSuccessor(nil, 0, 3), []byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, byte(base.KindSet), 1, 'j', 1, 'x'})
	oldWAL(t, fs, 3, 3, "m", "v")
	_, err := Open("/db", &Options{FS: fs, ReadOnly: true})
	if !errors.Is(err, ErrCorruption) {
		t.Errorf("Open %v; want ErrCorruption", err)
	}
}

// TestWALsWhoseSequenceNumbersSkipAhead: WALs written before successor
// records show a WAL deleted from between two others only by the numbers
// it held, missing from the run; the same WALs with the run whole open.
func TestWALsWhoseSequenceNumbersSkipAhead(t *testing.T) {
	for _, c := range []struct {
		next    uint64
		refused bool
	}{{2, false}, {3, true}} {
		fs := manifestWithoutAnID(t)
		writeOldWAL(t, fs, 2, 1, "k", "v", true)
		oldWAL(t, fs, 3, c.next, "j", "v")
		d, err := Open("/db", &Options{FS: fs, ReadOnly: true})
		if err == nil {
			d.Close()
		}
		if refused := errors.Is(err, ErrCorruption); refused != c.refused || !refused && err != nil {
			t.Errorf("second WAL from sequence number %d: Open %v; want refused %v", c.next, err, c.refused)
		}
	}
}
