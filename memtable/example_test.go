package memtable_test

import (
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/memtable"
)

// A memtable answers a Get at a snapshot with what it knows: the value,
// a tombstone, or that the filter ruled the key out without a tree search.
func Example() {
	m := memtable.New(memtable.Options{ExpectedEntries: 1000})
	m.Add(1, memtable.KindSet, []byte("cat"), []byte("meow"))
	m.Add(2, memtable.KindDelete, []byte("cat"), nil)

	for _, seq := range []memtable.SeqNum{1, 2} {
		v, res := m.Get([]byte("cat"), seq)
		fmt.Printf("cat@%d: %v %q\n", seq, res, v)
	}
	_, res := m.Get([]byte("dog"), memtable.MaxSeqNum)
	fmt.Println("dog:", res)

	it := m.NewIter()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Println(it.Key())
	}
	it.Close()
	// Output:
	// cat@1: found "meow"
	// cat@2: deleted ""
	// dog: filtered-out
	// "cat"#2,DEL
	// "cat"#1,SET
}

// The mutable level answers "could this key be in any memtable not yet on
// disk?" with at most two filter probes.
func ExampleLevel() {
	l := memtable.NewLevel(memtable.New(memtable.Options{}))
	l.Active().Add(1, memtable.KindSet, []byte("a"), []byte("1"))

	l, _ = l.Rotate(memtable.New(memtable.Options{})) // "a"'s memtable waits to flush
	l.Active().Add(2, memtable.KindSet, []byte("b"), []byte("2"))
	fmt.Println(l.MayContainHash(filter.Hash([]byte("a"))), l.MayContainHash(filter.Hash([]byte("b"))))

	imm := l.Immutables()
	l, _ = l.Flushed(imm[len(imm)-1]) // its SSTable is durable
	fmt.Println(l.MayContainHash(filter.Hash([]byte("a"))), len(l.Immutables()))
	// Output:
	// true true
	// false 0
}
