package lsm

import (
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestDamagedCurrent: CURRENT deleted, empty, garbage, or naming a
// manifest that does not exist. Open must refuse with an error wrapping
// ErrCorruption that names CURRENT or the manifest and points to Repair,
// and must leave every file as it was (a DB with data and no CURRENT is
// not a new DB: creating one would orphan, then delete, every table).
// Every table and WAL is intact, so Repair brings back every key.
func TestDamagedCurrent(t *testing.T) {
	base := vfs.NewMem()
	full := buildDamageDB(t, base, nil, "new")
	manifests := filesOf(t, base, "/db", manifest.KindManifest)
	if len(manifests) != 1 {
		t.Fatalf("manifests %v, want one", manifests)
	}
	for _, tc := range []struct {
		name    string
		current *string // nil: deleted
	}{
		{"deleted", nil},
		{"empty", ptr("")},
		{"garbage", ptr("\x00\xffnot a manifest name at all\x7f")},
		{"no newline", ptr(manifests[0])},
		{"dangling", ptr("MANIFEST-999999\n")},
		{"names a table", ptr(filesOf(t, base, "/db", manifest.KindTable)[0] + "\n")},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			fs := copyDB(t, base)
			if tc.current == nil {
				if err := fs.Remove("/db/CURRENT"); err != nil {
					t.Fatal(err)
				}
			} else {
				rewrite(t, fs, "/db/CURRENT", []byte(*tc.current))
			}
			before := dirFiles(t, fs, "/db")
			d, err := Open("/db", damageOpts(fs))
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded on a DB whose CURRENT is damaged")
			}
			t.Logf("Open: %v", err)
			refused(t, err, true, "CURRENT", manifests[0], "MANIFEST-999999")
			unchanged(t, fs, before)
			repairedTo(t, fs, full)
		})
	}
}

func ptr[T any](v T) *T { return &v }
