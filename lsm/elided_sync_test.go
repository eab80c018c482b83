package lsm

import (
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestElidedSyncDeleteIsABarrier: a Sync delete the filters prove
// unnecessary still returns only once every write before it is durable,
// as a Sync write that is committed does: a NoSync Put before it survives
// a machine crash after it returns (a black-box crash attack found it
// lost). Where nothing before it is unsynced, it writes and syncs nothing.
func TestElidedSyncDeleteIsABarrier(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, nil)
	defer d.Close()
	if err := d.Put([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete([]byte("zz-absent"), Sync); err != nil {
		t.Fatal(err)
	}
	r := openMem(t, mem.CrashClone(), nil)
	mustGet(t, r, "a", "1")
	r.Close()

	if err := d.Put([]byte("b"), []byte("2"), Sync); err != nil {
		t.Fatal(err)
	}
	before := d.Stats()
	if err := d.Delete([]byte("zz-absent-too"), Sync); err != nil {
		t.Fatal(err)
	}
	after := d.Stats()
	if after.DeletesElided != before.DeletesElided+1 || after.WALSyncs != before.WALSyncs {
		t.Errorf("a Sync delete of an absent key after Sync writes only: %d elided, %d WAL syncs; want 1, 0",
			after.DeletesElided-before.DeletesElided, after.WALSyncs-before.WALSyncs)
	}
}
