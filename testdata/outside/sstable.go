package main

import (
	"log"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// checkSSTable writes a table and reads it back through package sstable's
// own names only, as checkMemtable does for package memtable.
func checkSSTable() {
	fs := vfs.NewMem()
	f, err := fs.Create("000001.sst")
	if err != nil {
		log.Fatal(err)
	}
	w := sstable.NewWriter(f, sstable.WriterOptions{BloomBitsPerKey: 10})
	if err := w.Add(sstable.MakeInternalKey([]byte("pear"), 4, sstable.KindSet), []byte("green")); err != nil {
		log.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		log.Fatal(err)
	}
	rf, err := fs.Open("000001.sst")
	if err != nil {
		log.Fatal(err)
	}
	r, err := sstable.Open(rf, sstable.ReaderOptions{Cache: sstable.NewCache(1 << 20), FileNum: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var l sstable.Lookup
	v, kind, found, err := r.Get([]byte("pear"), filter.Hash([]byte("pear")), sstable.MaxSeqNum, &l)
	if err != nil || !found || kind != sstable.KindSet || string(v) != "green" {
		log.Fatalf("sstable: pear = %q, %v, found %v, %v (%v); want green", v, kind, found, err, &l)
	}
}
