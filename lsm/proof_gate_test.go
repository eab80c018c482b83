package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestProofGateStopsAndResumes: deletes of keys that exist stop asking
// the filters once their proofs keep failing, and deletes of absent keys
// that follow are elided again after the first sampled proof succeeds.
// Every answer stays right throughout.
func TestProofGateStopsAndResumes(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }
	const n = 5000
	for i := range n {
		if err := d.Put(key(2*i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}

	// Present keys: every proof fails. After the credit is spent, only
	// one delete in proofSampleEvery asks.
	before := d.Stats()
	for i := range n {
		if err := d.Delete(key(2 * i)); err != nil {
			t.Fatal(err)
		}
	}
	mid := d.Stats()
	asked := n - (mid.DeleteProofsSkipped - before.DeleteProofsSkipped)
	if want := uint64(proofMaxCredit + (n-proofMaxCredit)/proofSampleEvery + 1); asked > want {
		t.Errorf("%d of %d deletes of present keys asked the filters, want at most %d", asked, n, want)
	}
	if mid.DeletesElided != before.DeletesElided {
		t.Errorf("%d deletes of present keys elided", mid.DeletesElided-before.DeletesElided)
	}

	// Absent keys (odd, inside the tables' range): elision resumes.
	for i := range n {
		if err := d.Delete(key(2*i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	after := d.Stats()
	if elided := after.DeletesElided - mid.DeletesElided; elided < n*9/10 {
		t.Errorf("%d of %d deletes of absent keys elided after the gate closed, want 90%%", elided, n)
	}
	for i := range 2 * n {
		if _, err := d.Get(key(i)); err != ErrNotFound {
			t.Fatalf("Get(%s) = %v after its delete, want ErrNotFound", key(i), err)
		}
	}
}
