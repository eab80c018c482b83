package vfs_test

import (
	"fmt"
	"io"

	"github.com/monbandb/monban/vfs"
)

// replaceCurrent is the atomic-replace dance a manifest's CURRENT file
// goes through: write a temporary file, sync it, rename it over the old
// one, sync the directory.
func replaceCurrent(fsys vfs.FS, contents string) error {
	f, err := fsys.Create("/db/CURRENT.tmp")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, contents); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename("/db/CURRENT.tmp", "/db/CURRENT"); err != nil {
		return err
	}
	return fsys.SyncDir("/db")
}

// setup returns the starting disk: /db/CURRENT holds "v1", durably.
func setup() *vfs.MemFS {
	m := vfs.NewMem()
	m.MkdirAll("/db")
	m.SyncDir("/")
	replaceCurrent(m, "v1")
	return m
}

func readCurrent(fsys vfs.FS) string {
	f, err := fsys.Open("/db/CURRENT")
	if err != nil {
		return "missing"
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

// A crash test: count the workload's operations, then crash the machine at
// each one in turn and look at what a reboot finds. CURRENT must always be
// the old or the new version, whole.
func ExampleFaultFS() {
	counter := vfs.NewFault(setup())
	replaceCurrent(counter, "v2")
	n := counter.Count(vfs.OpAny)
	fmt.Println("operations:", n)

	for i := int64(1); i <= n+1; i++ { // n+1: the crash comes after the end
		ff := vfs.NewFault(setup())
		ff.SetTornWrites(true)
		ff.FailFromNth(vfs.OpAny, i)
		err := replaceCurrent(ff, "v2")
		after, _ := ff.Crash()
		fmt.Printf("dies at op %d: error=%t, CURRENT after reboot = %s\n", i, err != nil, readCurrent(after))
	}
	// Output:
	// operations: 6
	// dies at op 1: error=true, CURRENT after reboot = v1
	// dies at op 2: error=true, CURRENT after reboot = v1
	// dies at op 3: error=true, CURRENT after reboot = v1
	// dies at op 4: error=true, CURRENT after reboot = v1
	// dies at op 5: error=true, CURRENT after reboot = v1
	// dies at op 6: error=true, CURRENT after reboot = v1
	// dies at op 7: error=false, CURRENT after reboot = v2
}
