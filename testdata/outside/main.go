// Command outside uses monban as an application outside its module would:
// only the public packages, on an in-memory file system. It writes, takes
// a checkpoint, reopens the checkpoint read-only and reads it back; it
// uses a memtable and a table through those packages' own names
// (memtable.go, sstable.go); and it exits non-zero if anything is off.
// .ci/run runs it.
package main

import (
	"errors"
	"fmt"
	"log"

	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

func main() {
	checkMemtable()
	checkSSTable()
	fs := vfs.NewMem()
	db, err := lsm.Open("/db", &lsm.Options{FS: fs, MemtableSize: 4 << 10})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 1000 {
		if err := db.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			log.Fatal(err)
		}
	}
	if err := db.Delete([]byte("k0007")); err != nil {
		log.Fatal(err)
	}
	if err := db.Checkpoint("/ck"); err != nil {
		log.Fatal(err)
	}
	if err := db.Put([]byte("k0001"), []byte("after the checkpoint")); err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	ck, err := lsm.Open("/ck", &lsm.Options{FS: fs, ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ck.Close()
	n := 0
	it := ck.NewIter(nil)
	for k, v := range it.All() {
		var i int
		if _, err := fmt.Sscanf(string(k), "k%d", &i); err != nil || string(v) != fmt.Sprintf("v%d", i) {
			log.Fatalf("checkpoint: %s = %s, want v%d", k, v, i)
		}
		n++
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	if v, err := ck.Get([]byte("k0001")); err != nil || string(v) != "v1" {
		log.Fatalf("checkpoint: k0001 = %q, %v; want the value from before the checkpoint", v, err)
	}
	if _, err := ck.Get([]byte("k0007")); !errors.Is(err, lsm.ErrNotFound) {
		log.Fatalf("checkpoint: deleted k0007: %v, want ErrNotFound", err)
	}
	if err := ck.Put([]byte("x"), nil); !errors.Is(err, lsm.ErrReadOnly) {
		log.Fatalf("checkpoint opened read-only: Put: %v, want ErrReadOnly", err)
	}
	if n != 999 {
		log.Fatalf("checkpoint holds %d keys, want 999", n)
	}
	fmt.Println("outside: 999 keys written, checkpointed, read back read-only")
}
