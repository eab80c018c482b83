package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestAPowerCutWhileRecoveringFromAProcessCrash: a process crash leaves
// acknowledged writes in the WAL's page cache, unsynced. The Open (or
// Repair) that recovers them writes them into a table, synced, before the
// edit that names it; a power cut then keeps the table and drops the
// records it was made from, and the next Open took the table for a sign of
// lost edits and refused a directory nothing had damaged (a black-box
// crash attack found it). A recovery syncs the WALs it replays before it
// makes anything of them durable, as a rotation seals a WAL before its
// memtable is flushed. Every power cut during it must leave a directory
// Open takes, read-only or not.
func TestAPowerCutWhileRecoveringFromAProcessCrash(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, nil)
	for i := range 50 {
		if err := d.Put(fmt.Appendf(nil, "k%02d", i), []byte("v")); err != nil { // NoSync
			t.Fatal(err)
		}
	}
	killed := mem.ProcessCrashClone()
	d.Close()

	for _, recovery := range []struct {
		name string
		run  func(fs vfs.FS) error
	}{
		{"Open", func(fs vfs.FS) error {
			d, err := Open("/db", &Options{FS: fs})
			if err == nil {
				err = d.Close()
			}
			return err
		}},
		{"Repair", func(fs vfs.FS) error { _, err := Repair("/db", &Options{FS: fs}); return err }},
	} {
		counter := vfs.NewFault(killed.ProcessCrashClone())
		if err := recovery.run(counter); err != nil {
			t.Fatal(err)
		}
		total := counter.Count(vfs.OpAny)
		for n := int64(1); n <= total; n++ {
			ff := vfs.NewFault(killed.ProcessCrashClone())
			ff.FailFromNth(vfs.OpAny, n)
			_ = recovery.run(ff)
			cut, err := ff.Crash()
			if err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				d, err := Open("/db", &Options{FS: cut.ProcessCrashClone(), ReadOnly: ro})
				if err != nil {
					t.Fatalf("a power cut at operation %d of %d of the %s after a process crash; then Open (read-only %v): %v",
						n, total, recovery.name, ro, err)
				}
				d.Close()
			}
		}
	}
}
