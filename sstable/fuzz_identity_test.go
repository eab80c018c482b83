package sstable

import (
	"errors"
	"flag"
	"reflect"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// FuzzCheckIdentity feeds arbitrary files to CheckIdentity, which decodes
// a table's footer and properties block: it must never panic, every
// failure must wrap ErrCorruption, and it must agree with Open — a file
// it refuses, Open refuses with the same error, and a file Open accepts,
// it accepts with the same properties. Seeds are small valid tables, with
// and without an id, range deletions and a key-hash block; fixChecksums
// (the second argument) lets mutations reach past the checksums. As in
// FuzzReader, inputs over 1 KiB are skipped when fuzzing.
func FuzzCheckIdentity(f *testing.F) {
	for i, o := range []WriterOptions{{BlockSize: 64, BloomBitsPerKey: 10}, {BlockSize: 1, Compression: true, TableID: 7, KeyHashes: true}} {
		es := randEntries(newRand(uint64(20+i)), 4)[:3]
		for j := range es {
			es[j].value = es[j].value[:min(len(es[j].value), 6)]
		}
		d, _ := buildTable(f, es, o)
		f.Add(d, i == 0)
	}
	w := &memFile{}
	tw := NewWriter(w, WriterOptions{TableID: 1 << 40})
	tw.SetRangeDels(testSpans())
	if _, err := tw.Finish(); err != nil {
		f.Fatal(err)
	}
	f.Add(w.data, true)
	f.Add([]byte{}, false)
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fuzzing && len(data) > 1<<10 {
			return
		}
		if fix {
			fixChecksums(data)
		}
		ref := TableRef{FileNum: 1}
		p, err := CheckIdentity(&memFile{data: data}, ref)
		if err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("CheckIdentity: %v does not wrap ErrCorruption", err)
		}
		r, openErr := Open(&memFile{data: data}, ReaderOptions{FileNum: 1})
		switch {
		case err != nil && openErr == nil:
			r.Close()
			t.Fatalf("CheckIdentity refused (%v), Open accepted", err)
		case err != nil && openErr.Error() != err.Error():
			t.Fatalf("CheckIdentity says %v, Open %v", err, openErr)
		case openErr == nil:
			defer r.Close()
			if !reflect.DeepEqual(*p, *r.Properties()) {
				t.Fatalf("CheckIdentity read properties\n%+v\nOpen\n%+v", *p, *r.Properties())
			}
			ref.Size, ref.TableID = uint64(len(data)), p.TableID
			if _, err := CheckIdentity(&memFile{data: data}, ref); err != nil {
				t.Fatalf("CheckIdentity expecting the table's own size and id %#x: %v", p.TableID, err)
			}
		}
	})
}
