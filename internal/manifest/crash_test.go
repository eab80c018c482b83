package manifest

import (
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// crashScenario builds a DB over a FaultFS, lets exactly k more file-system
// operations succeed, runs op (which may fail from then on), and crashes,
// in every way: keeping each subset of the directory changes no SyncDir
// made durable (vfs.MemFS.CrashCloneKeeping). It recovers from what each
// crash left and returns the recovered Versions, the Versions before and
// after op, and whether op got through all its work.
func crashScenario(t *testing.T, k, maxManifest int64, op func(fs vfs.FS, vs *VersionSet) (*VersionSet, error)) (got []*Version, before, after *Version, done bool) {
	t.Helper()
	fault := vfs.NewFault(vfs.NewMem())
	vs, err := Create(fault, testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.SetMaxManifestSize(maxManifest)
	// Three edits, and with a tiny limit as many more as make op's edit
	// a rollover: one is due only once the edits have grown as long as
	// the snapshot the manifest began with.
	for i := 0; i < 3 || maxManifest == 1 && !vs.dueForRollover(); i++ {
		m := tableFor(vs.NextFileNum(), "a", "z", base.SeqNum(i+1))
		if err := vs.LogAndApply(&VersionEdit{LogNum: vs.NextFileNum(), Added: []NewFile{{Level: 0, Meta: m}}}); err != nil {
			t.Fatal(err)
		}
	}
	before = vs.Current()
	after = &Version{}
	after.Levels = before.Levels
	after.Levels[0] = append([]*FileMetadata{tableFor(vs.nextFileNum.Load(), "b", "c", 10)}, before.Levels[0]...)

	fault.FailFromNth(vfs.OpAny, k+1)
	_, err = op(fault, vs)
	done = err == nil
	// keep is asked about the unsynced changes in order: the j-th asked
	// is kept if bit j of the subset is set.
	unsynced := 0
	fault.CrashKeeping(func(int) bool { unsynced++; return false })
	for subset := range 1 << unsynced {
		j := 0
		mem, cerr := fault.CrashKeeping(func(int) bool { j++; return subset>>(j-1)&1 == 1 })
		if cerr != nil {
			t.Fatal(cerr)
		}
		rec, err := Recover(mem, testDir)
		if err != nil {
			t.Fatalf("k=%d, unsynced directory changes kept %b of %d: recovery after crash: %v", k, subset, unsynced, err)
		}
		got = append(got, rec.Current())
		// The first edit after recovery starts a new manifest and removes
		// every other.
		if err := rec.LogAndApply(&VersionEdit{}); err != nil {
			t.Fatalf("k=%d, kept %b of %d: first edit after recovery: %v", k, subset, unsynced, err)
		}
		if m := manifests(t, mem); len(m) != 1 {
			t.Fatalf("k=%d, kept %b of %d: manifests after recovery and an edit %v, want one", k, subset, unsynced, m)
		}
	}
	return got, before, after, done
}

// TestCrashDuringLogAndApply crashes after every prefix of the file-system
// operations of a LogAndApply, plain append and rollover: recovery finds
// the old state or the new one, never a mix, and the new one whenever
// LogAndApply returned.
func TestCrashDuringLogAndApply(t *testing.T) {
	t.Run("append", func(t *testing.T) { testCrashDuringLogAndApply(t, DefaultMaxManifestSize) })
	t.Run("rollover", func(t *testing.T) { testCrashDuringLogAndApply(t, 1) })
}

func testCrashDuringLogAndApply(t *testing.T, maxManifest int64) {
	sawOld, sawNew := false, false
	for k := int64(0); ; k++ {
		gots, before, after, done := crashScenario(t, k, maxManifest, func(_ vfs.FS, vs *VersionSet) (*VersionSet, error) {
			m := tableFor(vs.NextFileNum(), "b", "c", 10)
			return vs, vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: m}}})
		})
		for i, got := range gots {
			errOld, errNew := versionsEqual(got, before), versionsEqual(got, after)
			switch {
			case errNew == nil:
				sawNew = true
			case errOld == nil && !done:
				sawOld = true
			case errOld == nil:
				t.Fatalf("k=%d, crash %d: LogAndApply returned nil but recovery lost its edit", k, i)
			default:
				t.Fatalf("k=%d, crash %d: recovered a state that is neither old nor new:\n%v", k, i, got)
			}
		}
		if done {
			t.Logf("LogAndApply took %d file-system operations", k)
			break
		}
		if k > 100 {
			t.Fatal("LogAndApply never completed")
		}
	}
	if !sawOld || !sawNew {
		t.Fatalf("saw old %v, new %v: the crash points did not cover both outcomes", sawOld, sawNew)
	}
}

// TestCrashDuringRecover crashes inside a recovery and the rollover of the
// first edit after it: a second recovery still finds the state.
func TestCrashDuringRecover(t *testing.T) {
	for k := int64(0); ; k++ {
		gots, before, _, done := crashScenario(t, k, 1, func(fs vfs.FS, vs *VersionSet) (*VersionSet, error) {
			vs.Close()
			rec, err := Recover(fs, testDir)
			if err != nil {
				return nil, err
			}
			return rec, rec.LogAndApply(&VersionEdit{})
		})
		for i, got := range gots {
			if err := versionsEqual(got, before); err != nil {
				t.Fatalf("k=%d, crash %d: %v", k, i, err)
			}
		}
		if done {
			break
		}
		if k > 100 {
			t.Fatal("Recover never completed")
		}
	}
}
