package lsm

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestReadOnlyFaults fails each file-system operation of a read-only
// session in turn (EIO): the Open, a full scan, a Get of every key the
// directory ever held, and the Close. Whatever fails must say so with the
// disk's error, never as damage (ErrCorruption, which sends the user to
// Repair) nor as a missing DB; what succeeds must read exactly what the
// directory holds; and nothing, failed or not, may change a byte of the
// directory or keep it locked.
//
// By default every 16th operation fails, from one MONBAN_SEED draws (each
// run covers another sixteenth); MONBAN_FAULT_FULL fails every one.
func TestReadOnlyFaults(t *testing.T) {
	stride := int64(16)
	if os.Getenv("MONBAN_FAULT_FULL") != "" {
		stride = 1
	}
	seed := modelSeed(t)
	mem := vfs.NewMem()
	want := buildDamageDB(t, mem, nil, "ro")
	before := dirBytes(t, mem, "/db")
	for n := 1 + int64(seed%uint64(stride)); ; n += stride {
		ff := vfs.NewFault(mem)
		ff.Inject(vfs.Fault{Nth: n, Err: syscall.EIO})
		errs := readOnlySession(ff, want)
		fired := ff.Injected() > 0
		for _, err := range errs {
			if !fired || !errors.Is(err, vfs.ErrInjected) || !errors.Is(err, syscall.EIO) ||
				errors.Is(err, ErrCorruption) || errors.Is(err, ErrNotDB) {
				t.Fatalf("fault #%d (fired: %v; MONBAN_SEED=%d): %v", n, fired, seed, err)
			}
		}
		if after := dirBytes(t, mem, "/db"); !maps.EqualFunc(before, after, bytes.Equal) {
			t.Fatalf("fault #%d: a read-only session changed the directory", n)
		}
		if errs := readOnlySession(mem, want); len(errs) > 0 {
			t.Fatalf("after fault #%d, on the healed disk: %v", n, errs)
		}
		if !fired {
			if n <= stride {
				t.Fatal("a read-only session made fewer file-system calls than the stride")
			}
			t.Logf("every %dth of %d operations failed in turn (MONBAN_SEED=%d)", stride, n-1, seed)
			return
		}
	}
}

// readOnlySession opens /db read-only, reads it through and closes it,
// returning the errors met; a read that returns no error must agree with
// want.
func readOnlySession(fsys vfs.FS, want model) []error {
	d, err := Open("/db", &Options{FS: fsys, ReadOnly: true, MaxOpenFiles: 2})
	if err != nil {
		return []error{err}
	}
	var errs []error
	got := model{}
	it := d.NewIter(nil)
	for k, v := range it.All() {
		got[string(k)] = string(v)
	}
	if err := it.Close(); err != nil {
		errs = append(errs, err)
	} else if !maps.Equal(got, want) {
		errs = append(errs, errors.New("scan:\n"+diffModels(got, want)))
	}
	for i := range damageKeys {
		k := damageKey(i)
		v, err := d.Get([]byte(k))
		switch w, ok := want[k]; {
		case errors.Is(err, ErrNotFound) && ok, err == nil && string(v) != w:
			errs = append(errs, errors.New("Get("+k+") = "+string(v)+", want "+w))
		case err != nil && !errors.Is(err, ErrNotFound):
			errs = append(errs, err)
		}
	}
	if err := d.Close(); err != nil {
		errs = append(errs, err)
	}
	return errs
}
