package lsm_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/monbandb/monban/lsm"
)

// Example opens a DB, writes, reads, iterates and closes it.
func Example() {
	dir, err := os.MkdirTemp("", "monban-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := lsm.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var b lsm.Batch
	b.Put([]byte("apple"), []byte("red"))
	b.Put([]byte("banana"), []byte("yellow"))
	b.Put([]byte("cherry"), []byte("dark red"))
	if err := db.Write(&b); err != nil {
		log.Fatal(err)
	}
	if err := db.Delete([]byte("banana")); err != nil {
		log.Fatal(err)
	}

	it := db.NewIter(nil)
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// apple=red
	// cherry=dark red
}

// ExampleOpen is the README's first snippet (TestREADMESnippets keeps
// them the same): open, put, get, delete, iterate.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "monban-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := lsm.Open(dir, nil) // nil: the defaults
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Put([]byte("k"), []byte("v")); err != nil {
		log.Fatal(err)
	}
	v, err := db.Get([]byte("k")) // lsm.ErrNotFound when absent
	fmt.Printf("%s %v\n", v, err)
	if err := db.Delete([]byte("k")); err != nil { // free if the filters prove k absent
		log.Fatal(err)
	}
	it := db.NewIter(nil)
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: v <nil>
}

// ExampleDB_Get shows a hit, a miss, and what a snapshot keeps.
func ExampleDB_Get() {
	dir, _ := os.MkdirTemp("", "monban-example")
	defer os.RemoveAll(dir)
	db, err := lsm.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	db.Put([]byte("k"), []byte("v1"))
	snap := db.NewSnapshot()
	defer snap.Close()
	db.Put([]byte("k"), []byte("v2"))

	v, _ := db.Get([]byte("k"))
	old, _ := snap.Get([]byte("k"))
	_, err = db.Get([]byte("missing"))
	fmt.Printf("now %s, at the snapshot %s, missing: %v\n", v, old, errors.Is(err, lsm.ErrNotFound))
	// Output: now v2, at the snapshot v1, missing: true
}

// ExampleDB_Explain prints the read path of one key: which filters ruled
// the key out, and which blocks were read.
func ExampleDB_Explain() {
	dir, _ := os.MkdirTemp("", "monban-example")
	defer os.RemoveAll(dir)
	db, err := lsm.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for i := range 100 {
		db.Put(fmt.Appendf(nil, "key%03d", 2*i), []byte("v"))
	}
	db.Flush()

	for _, k := range []string{"key042", "key043"} {
		tr, _ := db.Explain([]byte(k))
		fmt.Print(tr)
	}
	// Output:
	// Get("key042")
	//   1. active memtable: quotient filter: absent
	//   3. L0 000004.sst: in range; bloom: maybe; block 0 @0+717 read from file;
	//      found #22,SET
	//   => found
	// Get("key043")
	//   1. active memtable: quotient filter: absent
	//   3. L0 000004.sst: in range; bloom: absent
	//   => not found
}
