package lsm

import (
	"fmt"
	"maps"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// swappedWALs builds a DB whose live WAL and an obsolete one that a crash
// left undeleted have swapped names. Each file then holds the other's
// records, which verify only under the other's number. It returns what
// the DB holds, the two names, and swap, which swaps them again.
func swappedWALs(t *testing.T, fs vfs.FS) (want model, older, live string, swap func()) {
	t.Helper()
	want = model{}
	session := func(prefix string) {
		d, err := Open("/db", &Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			k := fmt.Sprintf("%s%03d", prefix, i)
			if err := d.Put([]byte(k), []byte(k), Sync); err != nil {
				t.Fatal(err)
			}
			want[k] = k
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	session("a")
	logs := filesOf(t, fs, "/db", manifest.KindLog)
	if len(logs) != 1 {
		t.Fatalf("after session a: logs %v, want one", logs)
	}
	older, olderBytes := logs[0], readFile(t, fs, "/db/"+logs[0])
	session("b") // its Open replays and deletes the older log
	logs = filesOf(t, fs, "/db", manifest.KindLog)
	if len(logs) != 1 || logs[0] == older {
		t.Fatalf("after session b: logs %v, want one other than %s", logs, older)
	}
	live = logs[0]
	// As a crash between the manifest edit and the deletion leaves it.
	rewrite(t, fs, "/db/"+older, olderBytes)
	swap = func() {
		t.Helper()
		for _, r := range [][2]string{{older, "tmp"}, {live, older}, {"tmp", live}} {
			if err := fs.Rename("/db/"+r[0], "/db/"+r[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	swap()
	return want, older, live, swap
}

// TestSwappedWALsAreRefused: read under its own number, the live WAL
// replayed as empty and the obsolete one, which held every synced write
// since the last Open, was deleted unread. Open must refuse and change
// nothing; with the names put back, it recovers every write.
func TestSwappedWALsAreRefused(t *testing.T) {
	fs := vfs.NewMem()
	want, older, live, swap := swappedWALs(t, fs)
	before := dirFiles(t, fs, "/db")
	_, err := Open("/db", &Options{FS: fs})
	refused(t, err, true, older, live)
	unchanged(t, fs, before)

	swap()
	d, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Fatalf("with the names put back:\n%s", diffModels(got, want))
	}
}

// TestRepairReadsSwappedWALs: Repair took the misplaced live WAL for an
// obsolete one, by its name, and set it aside unread, and the writes only
// it held were missing from the repaired DB. It must replay each file as
// the log whose records it holds, and set aside a copy of a log over
// another's name, whose own records are gone, without replaying it twice.
func TestRepairReadsSwappedWALs(t *testing.T) {
	for _, copied := range []bool{false, true} {
		t.Run(fmt.Sprintf("copied=%v", copied), func(t *testing.T) {
			fs := vfs.NewMem()
			want, older, live, swap := swappedWALs(t, fs)
			fates := map[string]Fate{older: FateMerged, live: FateObsolete}
			if copied {
				swap()
				rewrite(t, fs, "/db/"+older, readFile(t, fs, "/db/"+live))
				fates = map[string]Fate{older: FateDamaged, live: FateMerged}
			}
			rep := repairedTo(t, fs, want)
			for _, f := range rep.Files {
				if want, ok := fates[f.Name]; ok && f.Fate != want {
					t.Errorf("%s: %v (%v); want %v", f.Name, f.Fate, f.Err, want)
				}
			}
		})
	}
}
