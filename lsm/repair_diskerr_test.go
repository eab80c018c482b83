package lsm

import (
	"errors"
	"fmt"
	"maps"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestRepairDiskErrorSetsNothingAside: a file the disk fails to open or
// read (EIO) during Repair is not damage. Repair stops with that error
// rather than set the file aside as damaged or as another program's, or
// distrust a manifest it could not read (which would bring back what its
// compactions deleted); nothing it held goes to lost/, and a Repair once
// the disk answers recovers every key. Each kind of file is failed at
// each of its opens and reads in turn. (Files the trusted manifest proves
// obsolete may have been moved aside before the failure, as any Repair
// moves them.)
func TestRepairDiskErrorSetsNothingAside(t *testing.T) {
	mem := vfs.NewMem()
	want := buildLeveledDB(t, mem)
	for _, target := range []struct {
		op      vfs.Op
		pattern string
	}{
		{vfs.OpOpen, "*.sst"}, {vfs.OpRead, "*.sst"},
		{vfs.OpOpen, "*.log"}, {vfs.OpRead, "*.log"},
		{vfs.OpOpen, "MANIFEST-*"}, {vfs.OpRead, "MANIFEST-*"},
		{vfs.OpOpen, "CURRENT"}, {vfs.OpRead, "CURRENT"},
	} {
		for n := int64(1); ; n++ {
			name := fmt.Sprintf("%v %s #%d", target.op, target.pattern, n)
			ffs := vfs.NewFault(mem.ProcessCrashClone()) // every byte Close left
			ffs.Inject(vfs.Fault{Op: target.op, Match: vfs.MatchBase(target.pattern), Nth: n, Err: syscall.EIO})
			rep, err := Repair("/db", repairOpts(ffs))
			if ffs.Injected() == 0 {
				if err != nil {
					t.Fatalf("%s: no fault fired, yet Repair: %v", name, err)
				}
				if n == 1 {
					t.Fatalf("%s: Repair never did this", name)
				}
				break
			}
			if err != nil && !errors.Is(err, syscall.EIO) {
				t.Fatalf("%s: Repair: %v, want the disk's EIO", name, err)
			}
			ffs.Heal()
			if rep != nil {
				for _, f := range rep.Files {
					switch f.Fate {
					case FateDamaged, FatePartlyMerged, FateAfterDamage, FateNotMonban:
						t.Fatalf("%s: Repair (err %v) called %s %q: %v", name, err, f.Name, f.Fate, f.Err)
					}
				}
			}
			if _, err := Repair("/db", repairOpts(ffs)); err != nil {
				t.Fatalf("%s: a second Repair: %v", name, err)
			}
			d := openMem(t, ffs, repairOpts(ffs))
			if got := dbContents(t, d); !maps.Equal(got, want) {
				t.Fatalf("%s: after a second Repair:\n%s", name, diffModels(got, want))
			}
			d.Close()
		}
	}
}
