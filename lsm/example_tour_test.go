package lsm_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// The examples of this file are the API tour: each everyday call, on a DB
// kept in memory by vfs.NewMem, so that nothing touches the disk. Pass a
// nil *Options, or leave Options.FS nil, for the operating system's.

// fill puts each key with the value "v-" + key: the examples start from
// it.
func fill(db *lsm.DB, keys ...string) {
	for _, k := range keys {
		if err := db.Put([]byte(k), []byte("v-"+k)); err != nil {
			log.Fatal(err)
		}
	}
}

// ExampleDB_NewIter_bounds iterates over the keys k with
// LowerBound <= k < UpperBound: the lower bound is inclusive, the upper
// exclusive, and either may be nil for no bound.
func ExampleDB_NewIter_bounds() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()}) // a DB in memory
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "b", "c", "d", "e")

	it := db.NewIter(&lsm.IterOptions{LowerBound: []byte("b"), UpperBound: []byte("d")})
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// b=v-b
	// c=v-c
}

// ExampleIter_Prev iterates in reverse: Last, then Prev until the iterator
// runs off the start; SeekLT starts from the last key before a given one.
// Err, or Close, says whether the loop ended at the start or on an error.
func ExampleIter_Prev() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "b", "c")

	it := db.NewIter(nil)
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Printf("%s ", it.Key())
	}
	if it.SeekLT([]byte("c")) {
		fmt.Printf("| before c: %s\n", it.Key())
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: c b a | before c: b
}

// ExampleBatch applies several writes atomically: a reader sees all of
// them or none. The batch copies keys and values as they are added, and
// can be Reset and reused once written.
func ExampleBatch() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "b", "c", "d")

	var b lsm.Batch
	b.Put([]byte("e"), []byte("v-e"))
	b.Delete([]byte("a"))
	b.DeleteRange([]byte("b"), []byte("d")) // b and c: the end is exclusive
	if err := db.Write(&b); err != nil {
		log.Fatal(err)
	}

	it := db.NewIter(nil)
	for k := range it.All() {
		fmt.Printf("%s ", k)
	}
	fmt.Println()
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: d e
}

// ExampleDB_NewSnapshot reads the DB as it was when the snapshot was
// taken, while writes go on. Close the snapshot when done: until then
// compactions keep every version it can see.
func ExampleDB_NewSnapshot() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "b")

	snap := db.NewSnapshot()
	defer snap.Close()
	db.Put([]byte("a"), []byte("new"))
	db.Delete([]byte("b"))

	it := snap.NewIter(nil)
	for k, v := range it.All() {
		fmt.Printf("snapshot: %s=%s\n", k, v)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	v, _ := db.Get([]byte("a"))
	_, err = db.Get([]byte("b"))
	fmt.Printf("now: a=%s, b: %v\n", v, err)
	// Output:
	// snapshot: a=v-a
	// snapshot: b=v-b
	// now: a=new, b: monban: not found
}

// ExampleDB_MultiGet reads several keys at one point in time. Each key has
// its own answer: a value, or ErrNotFound.
func ExampleDB_MultiGet() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "c")

	keys := [][]byte{[]byte("c"), []byte("b"), []byte("a")}
	values, errs := db.MultiGet(keys)
	for i, k := range keys {
		switch {
		case errors.Is(errs[i], lsm.ErrNotFound):
			fmt.Printf("%s: not found\n", k)
		case errs[i] != nil:
			log.Fatal(errs[i])
		default:
			fmt.Printf("%s=%s\n", k, values[i])
		}
	}
	// Output:
	// c=v-c
	// b: not found
	// a=v-a
}

// ExampleDB_Checkpoint copies the DB, as it is at the call, into a new
// directory that opens as a DB of its own. The writes that follow do not
// reach the copy.
func ExampleDB_Checkpoint() {
	fs := vfs.NewMem()
	db, err := lsm.Open("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a")

	if err := db.Checkpoint("backup"); err != nil {
		log.Fatal(err)
	}
	fill(db, "b")

	backup, err := lsm.Open("backup", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	defer backup.Close()
	_, errA := backup.Get([]byte("a"))
	_, errB := backup.Get([]byte("b"))
	fmt.Printf("backup: a %v, b %v\n", errA, errB)
	// Output: backup: a <nil>, b monban: not found
}

// ExampleOptions_readOnly opens an existing DB without writing to its
// directory: reads work, every write returns ErrReadOnly.
func ExampleOptions_readOnly() {
	fs := vfs.NewMem()
	db, err := lsm.Open("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	fill(db, "a")
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	ro, err := lsm.Open("db", &lsm.Options{FS: fs, ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	v, _ := ro.Get([]byte("a"))
	err = ro.Put([]byte("b"), []byte("x"))
	fmt.Printf("a=%s; Put: %v\n", v, errors.Is(err, lsm.ErrReadOnly))
	// Output: a=v-a; Put: true
}

// ExampleRepair rebuilds a DB that Open refuses, here because its CURRENT
// file is gone, from the tables and WALs it finds. What it could not use
// it moves to the directory's lost/ and lists in its report.
func ExampleRepair() {
	fs := vfs.NewMem()
	db, err := lsm.Open("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	fill(db, "a", "b")
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	if err := fs.Remove("db/CURRENT"); err != nil {
		log.Fatal(err)
	}

	_, err = lsm.Open("db", &lsm.Options{FS: fs})
	fmt.Println("open:", errors.Is(err, lsm.ErrCorruption))

	report, err := lsm.Repair("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("keys recovered:", report.KeysRecovered)
	db, err = lsm.Open("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	v, _ := db.Get([]byte("b"))
	fmt.Printf("b=%s\n", v)
	// Output:
	// open: true
	// keys recovered: 2
	// b=v-b
}
