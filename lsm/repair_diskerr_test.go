package lsm

import (
	"errors"
	"fmt"
	"maps"
	"syscall"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
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
// moves them.) So is a table damaged only in its filter, which Repair
// reads again without it: an EIO on that second open was taken for the
// damage, and the table set aside (a black-box attack found it).
func TestRepairDiskErrorSetsNothingAside(t *testing.T) {
	healthy := vfs.NewMem()
	want := buildLeveledDB(t, healthy)
	filterDamaged := healthy.ProcessCrashClone()
	table := filesOf(t, filterDamaged, "/db", manifest.KindTable)[0]
	data := readFile(t, filterDamaged, "/db/"+table)
	p := tableProps(t, filterDamaged, "/db/"+table)
	data[p.DataBytes+p.FilterBytes/2] ^= 0x10 // the filter block follows the data blocks
	rewrite(t, filterDamaged, "/db/"+table, data)
	for _, target := range []struct {
		db      string
		mem     *vfs.MemFS
		op      vfs.Op
		pattern string
	}{
		{"", healthy, vfs.OpOpen, "*.sst"}, {"", healthy, vfs.OpRead, "*.sst"},
		{"", healthy, vfs.OpOpen, "*.log"}, {"", healthy, vfs.OpRead, "*.log"},
		{"", healthy, vfs.OpOpen, "MANIFEST-*"}, {"", healthy, vfs.OpRead, "MANIFEST-*"},
		{"", healthy, vfs.OpOpen, "CURRENT"}, {"", healthy, vfs.OpRead, "CURRENT"},
		{"filter of " + table + " damaged, ", filterDamaged, vfs.OpOpen, table},
		{"filter of " + table + " damaged, ", filterDamaged, vfs.OpRead, table},
	} {
		for n := int64(1); ; n++ {
			name := fmt.Sprintf("%s%v %s #%d", target.db, target.op, target.pattern, n)
			ffs := vfs.NewFault(target.mem.ProcessCrashClone()) // every byte Close left
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
