package manifest

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// TestRecoverNoDB: fs.ErrNotExist, the engine's "create a new DB", comes
// back only for a directory holding no monban data file, or holding just
// what a Create that crashed before writing CURRENT leaves.
func TestRecoverNoDB(t *testing.T) {
	created := func() []byte {
		mem := vfs.NewMem()
		vs, err := Create(mem, testDir)
		if err != nil {
			t.Fatal(err)
		}
		vs.Close()
		return readFile(t, mem, testDir+"/MANIFEST-000001")
	}()
	for name, files := range map[string]map[string][]byte{
		"no directory":                         nil,
		"empty directory":                      {},
		"LOCK alone":                           {"LOCK": nil},
		"LOCK and CURRENT.tmp":                 {"LOCK": nil, "CURRENT.tmp": []byte("MANIFEST-000001\n")},
		"unrelated files":                      {"notes.txt": []byte("x"), "000001.sst.bak": nil},
		"Create crashed: empty manifest":       {"MANIFEST-000001": nil},
		"Create crashed: half its manifest":    {"MANIFEST-000001": created[:len(created)/2], "LOCK": nil},
		"Create crashed: its whole manifest":   {"MANIFEST-000001": created, "CURRENT.tmp": nil},
		"Create crashed: manifest zero-filled": {"MANIFEST-000001": make([]byte, 4096)},
	} {
		mem := vfs.NewMem()
		if files != nil {
			if err := mem.MkdirAll(testDir); err != nil {
				t.Fatal(err)
			}
		}
		for n, b := range files {
			writeFile(t, mem, testDir+"/"+n, b)
		}
		_, err := Recover(mem, testDir)
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: err = %v, want fs.ErrNotExist only", name, err)
		}
		if files == nil {
			continue
		}
		// And the engine's next step, Create, succeeds there.
		if vs, err := Create(mem, testDir); err != nil {
			t.Errorf("%s: Create after Recover: %v", name, err)
		} else {
			vs.Close()
		}
	}
}

// TestRecoverDamagedDB: a directory with data but no usable CURRENT or
// manifest is corruption naming the file at fault, never fs.ErrNotExist
// (which would make the engine create a DB over the old one's tables).
func TestRecoverDamagedDB(t *testing.T) {
	db := func() *vfs.MemFS { mem, _, _, _ := buildDB(t, 2); return mem }
	for _, tc := range []struct {
		name  string
		setup func(mem *vfs.MemFS)
		want  string // named in the error
	}{
		{"CURRENT removed", func(mem *vfs.MemFS) { mem.Remove(testDir + "/CURRENT") }, "CURRENT"},
		{"CURRENT removed, tables alone", func(mem *vfs.MemFS) {
			mem.Remove(testDir + "/CURRENT")
			mem.Remove(testDir + "/MANIFEST-000001")
			writeFile(t, mem, testDir+"/000002.sst", []byte("table"))
		}, "CURRENT"},
		{"only a WAL", func(mem *vfs.MemFS) {
			mem.Remove(testDir + "/CURRENT")
			mem.Remove(testDir + "/MANIFEST-000001")
			writeFile(t, mem, testDir+"/000004.log", nil)
		}, "CURRENT"},
		{"no CURRENT, MANIFEST-000001 with edits after Create's", func(mem *vfs.MemFS) { mem.Remove(testDir + "/CURRENT") }, "CURRENT"},
		{"no CURRENT, a later manifest alone", func(mem *vfs.MemFS) {
			mem.Remove(testDir + "/CURRENT")
			mem.Rename(testDir+"/MANIFEST-000001", testDir+"/MANIFEST-000009")
		}, "CURRENT"},
		{"CURRENT removed, more data files than the error names", func(mem *vfs.MemFS) {
			mem.Remove(testDir + "/CURRENT")
			for _, name := range []string{"000011.sst", "000012.sst", "000013.sst", "000014.log"} {
				writeFile(t, mem, testDir+"/"+name, nil)
			}
		}, "holds 5 data files (000011.sst, 000012.sst, 000013.sst, 000014.log, …)"},
		{"empty CURRENT", func(mem *vfs.MemFS) { writeFile(t, mem, testDir+"/CURRENT", nil) }, "CURRENT"},
		{"garbage CURRENT", func(mem *vfs.MemFS) { writeFile(t, mem, testDir+"/CURRENT", []byte("\x00\xffjunk")) }, "CURRENT"},
		{"CURRENT names a missing manifest", func(mem *vfs.MemFS) { mem.Remove(testDir + "/MANIFEST-000001") }, "MANIFEST-000001"},
		{"empty manifest", func(mem *vfs.MemFS) { writeFile(t, mem, testDir+"/MANIFEST-000001", nil) }, "MANIFEST-000001"},
		{"garbage manifest", func(mem *vfs.MemFS) {
			writeFile(t, mem, testDir+"/MANIFEST-000001", []byte(strings.Repeat("garbage!", 100)))
		}, "MANIFEST-000001"},
	} {
		mem := db()
		tc.setup(mem)
		_, err := Recover(mem, testDir)
		if !errors.Is(err, base.ErrCorruption) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrCorruption (not fs.ErrNotExist) naming %s", tc.name, err, tc.want)
		}
	}
}

// TestRecoverUnreadableManifest: a manifest CURRENT names that fails to
// open for a reason other than being missing (an I/O error) is reported as
// that error, naming the manifest: not corruption, which would send the
// user to Repair a DB the disk merely failed to read, and not
// fs.ErrNotExist, which would create a new DB over it. A missing one is
// corruption (TestRecoverDamagedDB).
func TestRecoverUnreadableManifest(t *testing.T) {
	for name, setup := range map[string]func(*vfs.MemFS) *vfs.FaultFS{
		"named by CURRENT": func(mem *vfs.MemFS) *vfs.FaultFS {
			fault := vfs.NewFault(mem)
			fault.Inject(vfs.Fault{Op: vfs.OpOpen, Nth: 2, Err: syscall.EIO}) // CURRENT, then the manifest
			return fault
		},
		"CURRENT missing, the manifest alone": func(mem *vfs.MemFS) *vfs.FaultFS {
			mem.Remove(testDir + "/CURRENT")
			fault := vfs.NewFault(mem)
			fault.Inject(vfs.Fault{Op: vfs.OpOpen, Match: vfs.MatchBase("MANIFEST-000001"), Nth: 1, Err: syscall.EIO})
			return fault
		},
	} {
		mem := vfs.NewMem()
		if _, err := Create(mem, testDir); err != nil {
			t.Fatal(err)
		}
		_, err := Recover(setup(mem), testDir)
		if !errors.Is(err, syscall.EIO) || !errors.Is(err, vfs.ErrInjected) ||
			errors.Is(err, base.ErrCorruption) || errors.Is(err, fs.ErrNotExist) ||
			!strings.Contains(err.Error(), "MANIFEST-000001") {
			t.Errorf("%s: err = %v, want the open's EIO naming MANIFEST-000001, not ErrCorruption", name, err)
		}
	}
}
