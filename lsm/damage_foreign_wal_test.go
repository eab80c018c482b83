package lsm

import (
	"encoding/binary"
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

// oldWAL returns a WAL as monban wrote it before DB ids: log num holding
// one batch that sets k to v at sequence number seq, and no identity.
func oldWAL(t *testing.T, fs vfs.FS, num uint64, seq uint64, k, v string, more ...[]byte) {
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
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestADBWithoutAnIdentityGetsOne: a DB written before DB ids (a manifest
// without one, a WAL without an identity record) opens, replays its WAL,
// and its first Open records an id, which the WALs written from then on
// begin with; a WAL without it under a live WAL's name is then refused.
func TestADBWithoutAnIdentityGetsOne(t *testing.T) {
	fs := vfs.NewMem()
	vs, err := manifest.Create(fs, "/db")
	if err != nil {
		t.Fatal(err)
	}
	vs.Close()
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
	_, err = Open("/db", &Options{FS: fs})
	refused(t, err, true, logs[len(logs)-1])
}

// TestAnIdentityAfterTheFirstRecordIsDamage: only a WAL's first record is
// its identity; one further on, in a record that verifies, is no batch
// monban writes.
func TestAnIdentityAfterTheFirstRecordIsDamage(t *testing.T) {
	fs := vfs.NewMem()
	vs, err := manifest.Create(fs, "/db")
	if err != nil {
		t.Fatal(err)
	}
	vs.Close()
	oldWAL(t, fs, 2, 1, "k", "v", appendWALIdentity(nil, 7))
	_, err = Open("/db", &Options{FS: fs})
	refused(t, err, false, "000002.log")
}
