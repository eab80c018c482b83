package lsm

import (
	"fmt"
	"maps"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestSwappedWALsAreRefused swaps the live WAL with an obsolete one that a
// crash left undeleted. Each file then holds the other's records, which
// verify only under the other's number: read under its own, the live one
// replayed as empty and the obsolete one, which held every synced write
// since the last Open, was deleted unread. Open must refuse and change
// nothing; with the names put back, it recovers every write.
func TestSwappedWALsAreRefused(t *testing.T) {
	fs := vfs.NewMem()
	want := model{}
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
	live := logs[0]
	// As a crash between the manifest edit and the deletion leaves it.
	rewrite(t, fs, "/db/"+older, olderBytes)
	swap := func() {
		t.Helper()
		for _, r := range [][2]string{{older, "tmp"}, {live, older}, {"tmp", live}} {
			if err := fs.Rename("/db/"+r[0], "/db/"+r[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	swap()
	before := dirFiles(t, fs, "/db")
	_, err := Open("/db", &Options{FS: fs})
	refused(t, err, false, older, live)
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
