package lsm_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// More of the API tour (example_tour_test.go): range deletion, prefix
// iteration, the event listener, and a DB in memory that can crash.

// ExampleDB_DeleteRange deletes every key in [start, end) with one WAL
// record and one range tombstone, however many keys the range holds. The
// end is exclusive, and a later Put inside the range is found again.
func ExampleDB_DeleteRange() {
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem()})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "user/1", "user/2", "user/3", "video/1")

	if err := db.DeleteRange([]byte("user/"), []byte("user0")); err != nil {
		log.Fatal(err) // "user0": the first key after every "user/..."
	}
	fill(db, "user/2")

	it := db.NewIter(nil)
	for k := range it.All() {
		fmt.Printf("%s ", k)
	}
	fmt.Println()
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: user/2 video/1
}

// ExampleIterOptions_prefix iterates over the keys of one prefix. With
// Options.Split, every filter also holds each key's prefix, so the
// iterator leaves out each memtable and table whose filter rules the
// prefix out, reading none of its blocks (Stats.PrefixSkips).
func ExampleIterOptions_prefix() {
	// The prefix of "user/1" is "user/": everything up to the first '/'.
	split := &filter.Split{Name: "to-slash", Len: func(k []byte) int {
		if i := bytes.IndexByte(k, '/'); i >= 0 {
			return i + 1
		}
		return len(k)
	}}
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem(), Split: split})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "user/1", "user/2")
	if err := db.Flush(); err != nil { // one table holds the users
		log.Fatal(err)
	}
	fill(db, "video/1") // the memtable holds the video

	it := db.NewIter(&lsm.IterOptions{Prefix: []byte("user/")})
	for k, v := range it.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("sources skipped:", db.Stats().PrefixSkips)
	// Output:
	// user/1=v-user/1
	// user/2=v-user/2
	// sources skipped: 1
}

// ExampleOptions_eventListener is told what the DB does in the
// background. The callbacks run on the goroutine doing the work and must
// return quickly; they may call Stats, and nothing else of the DB. Here
// Compact moves the one table down the levels without rewriting it.
func ExampleOptions_eventListener() {
	events := &lsm.EventListener{
		FlushEnd: func(i lsm.FlushInfo) {
			fmt.Printf("flushed %d entries into %d table(s)\n", i.Entries, len(i.Output))
		},
		CompactionEnd: func(i lsm.CompactionInfo) {
			fmt.Printf("compaction (%s): L%d to L%d\n", i.Kind, i.Level, i.OutputLevel)
		},
	}
	db, err := lsm.Open("db", &lsm.Options{FS: vfs.NewMem(), EventListener: events})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fill(db, "a", "b", "c")

	if err := db.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// flushed 3 entries into 1 table(s)
	// compaction (move): L0 to L1
	// compaction (move): L1 to L2
	// compaction (move): L2 to L3
	// compaction (move): L3 to L4
	// compaction (move): L4 to L5
	// compaction (move): L5 to L6
}

// ExampleOptions_fs runs a DB on vfs.NewMem, a file system in memory
// that knows what is durable, and shows what a machine crash keeps: the
// write made with lsm.Sync survives, the one without it does not (a
// process crash, ProcessCrashClone, would keep both). Tests of code built
// on monban can crash it so, with no disk and no root.
func ExampleOptions_fs() {
	fs := vfs.NewMem()
	db, err := lsm.Open("db", &lsm.Options{FS: fs})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Put([]byte("synced"), []byte("1"), lsm.Sync); err != nil {
		log.Fatal(err)
	}
	if err := db.Put([]byte("unsynced"), []byte("2")); err != nil {
		log.Fatal(err)
	}

	after := fs.CrashClone() // the disk after a power cut, now
	db2, err := lsm.Open("db", &lsm.Options{FS: after})
	if err != nil {
		log.Fatal(err)
	}
	defer db2.Close()
	_, err1 := db2.Get([]byte("synced"))
	_, err2 := db2.Get([]byte("unsynced"))
	fmt.Printf("synced: %v, unsynced: %v\n", err1, err2)
	// Output: synced: <nil>, unsynced: monban: not found
}
