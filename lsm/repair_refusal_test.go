package lsm

import (
	"errors"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestRepairRefusalNamesOnlyWhatItFound: a Repair refusing a directory
// that holds no DB lists what it found there, not the LOCK it made itself
// to hold the directory (it listed "[LOCK]" for an empty directory), and
// leaves the directory as it was.
func TestRepairRefusalNamesOnlyWhatItFound(t *testing.T) {
	for name, files := range map[string][]string{"empty": nil, "notes": {"notes.txt"}} {
		mem := vfs.NewMem()
		if err := mem.MkdirAll("/db"); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rewrite(t, mem, "/db/"+f, []byte("mine"))
		}
		_, err := RepairWith("/db", &Options{FS: mem}, RepairOptions{})
		if !errors.Is(err, ErrNotDB) || strings.Contains(err.Error(), "LOCK") {
			t.Errorf("%s: Repair: %v; want ErrNotDB listing no LOCK", name, err)
		}
		if name == "empty" && !strings.Contains(err.Error(), "is empty") {
			t.Errorf("%s: Repair: %v; want it said empty", name, err)
		}
		for _, f := range files {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: Repair: %v; want %s named", name, err, f)
			}
		}
		if got, err := mem.List("/db"); err != nil || len(got) != len(files) {
			t.Errorf("%s: the directory holds %v (%v), want %v", name, got, err, files)
		}
	}
}
