package sstable_test

import (
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// Example writes a table of three entries, then reads it back: a point
// lookup at a snapshot, an absent key the filter rejects, and a scan.
func Example() {
	fs := vfs.NewMem()
	f, _ := fs.Create("000001.sst")
	w := sstable.NewWriter(f, sstable.WriterOptions{BloomBitsPerKey: 10})
	w.Add(sstable.MakeInternalKey([]byte("apple"), 2, sstable.KindSet), []byte("red"))
	w.Add(sstable.MakeInternalKey([]byte("pear"), 9, sstable.KindDelete), nil)
	w.Add(sstable.MakeInternalKey([]byte("pear"), 4, sstable.KindSet), []byte("green"))
	props, _ := w.Finish()
	fmt.Println(props.NumEntries, "entries,", props.NumDeletions, "tombstone")

	rf, _ := fs.Open("000001.sst")
	r, err := sstable.Open(rf, sstable.ReaderOptions{Cache: sstable.NewCache(1 << 20), FileNum: 1})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for _, q := range []struct {
		key string
		seq sstable.SeqNum
	}{{"pear", 5}, {"pear", 10}, {"fig", 10}} {
		var l sstable.Lookup
		v, kind, found, _ := r.Get([]byte(q.key), filter.Hash([]byte(q.key)), q.seq, &l)
		if found {
			fmt.Printf("%s@%d: %v %q\n", q.key, q.seq, kind, v)
		} else {
			fmt.Printf("%s@%d: not found\n", q.key, q.seq)
		}
		fmt.Println(" ", l.String())
	}
	it := r.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%v %q\n", it.Key(), it.Value())
	}
	it.Close()
	// Output:
	// 3 entries, 1 tombstone
	// pear@5: SET "green"
	//   in range; bloom: maybe; block 0 @0+58 read from file; found #4,SET
	// pear@10: DEL ""
	//   in range; bloom: maybe; block 0 @0+58 block cache hit; tombstone #9,DEL
	// fig@10: not found
	//   in range; bloom: absent
	// "apple"#2,SET "red"
	// "pear"#9,DEL ""
	// "pear"#4,SET "green"
}
