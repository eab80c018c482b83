package main

import (
	"log"

	"github.com/monbandb/monban/memtable"
)

// checkMemtable uses package memtable through its own names only: its
// signatures' key types are aliases of internal ones, which code here
// could not name.
func checkMemtable() {
	m := memtable.New(memtable.Options{ExpectedEntries: 16})
	if err := m.Add(1, memtable.KindSet, []byte("cat"), []byte("meow")); err != nil {
		log.Fatal(err)
	}
	if err := m.Add(2, memtable.KindDelete, []byte("cat"), nil); err != nil {
		log.Fatal(err)
	}
	var seq memtable.SeqNum = 1
	if v, res := m.Get([]byte("cat"), seq); res != memtable.Found || string(v) != "meow" {
		log.Fatalf("memtable: cat@1 = %q, %v; want meow, found", v, res)
	}
	if _, res := m.Get([]byte("cat"), memtable.MaxSeqNum); res != memtable.Deleted {
		log.Fatalf("memtable: cat now: %v, want deleted", res)
	}
	it := m.NewIter()
	defer it.Close()
	if !it.SeekGE(memtable.MakeInternalKey([]byte("cat"), memtable.MaxSeqNum, memtable.KindSet)) || it.Key().Seq() != 2 {
		log.Fatal("memtable: SeekGE(cat) is not on the newest version")
	}
}
