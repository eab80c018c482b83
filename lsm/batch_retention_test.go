package lsm

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"weak"
)

// TestWriteLetsGoOfTheBatch checks that the engine holds no reference to a
// caller's batch once Write returns: a batch of megabytes kept alive past
// its commit (by a pooled writer, or the queue's backing array) holds its
// memory for as long as the engine keeps it, on top of the memtable's copy.
// Concurrent writers make the queue hold several at once.
func TestWriteLetsGoOfTheBatch(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	value := bytes.Repeat([]byte("v"), 64<<10)
	const writers = 8
	refs := make([]weak.Pointer[Batch], writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			b := new(Batch)
			for j := range 4 {
				b.Put(fmt.Appendf(nil, "w%d-%d", i, j), value)
			}
			refs[i] = weak.Make(b)
			if err := d.Write(b); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	runtime.GC()
	for i, r := range refs {
		if r.Value() != nil {
			t.Errorf("writer %d's batch is still reachable after its Write returned and a GC ran", i)
		}
	}
}

// TestPutPoolsOnlySmallBatches checks that Put and Delete do not keep a
// batch that grew to hold a large value for the next one: the pool would
// hold its buffer, up to MaxValueSize, until the collector empties it.
func TestPutPoolsOnlySmallBatches(t *testing.T) {
	big := new(Batch)
	big.Put([]byte("k"), make([]byte, maxPooledBatch+1))
	releaseBatch(big)
	for range 16 {
		if b := batchPool.Get().(*Batch); b == big {
			t.Fatalf("a batch of %d bytes went back to the pool", cap(big.data))
		}
	}
	small := new(Batch)
	small.Put([]byte("k"), []byte("v"))
	releaseBatch(small) // no check that it is reused: a pool may drop anything
}
