package manifest

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// levelOf builds a Version with n disjoint tables in L1.
func levelOf(b *testing.B, n int) *Version {
	e := &VersionEdit{}
	for i := range n {
		e.Added = append(e.Added, NewFile{Level: 1, Meta: tableFor(uint64(i+1), fmt.Sprintf("%08d-a", i), fmt.Sprintf("%08d-z", i), 1)})
	}
	bl := newBuilder(&Version{})
	if err := bl.apply(e); err != nil {
		b.Fatal(err)
	}
	v, err := bl.build()
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkFindFile is the per-level step of a point read.
func BenchmarkFindFile(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprint("tables=", n), func(b *testing.B) {
			v := levelOf(b, n)
			keys := make([][]byte, 1024)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "%08d-m", (i*7919)%n)
			}
			b.ReportAllocs()
			found := 0
			for i := 0; b.Loop(); i++ {
				if v.FindFile(1, keys[i&1023]) != nil {
					found++
				}
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}

// BenchmarkLogAndApply measures one flush-sized edit made durable on a
// MemFS (no real fsync: this is the CPU cost), rolling over at the default
// size, and reports the manifest bytes each edit costs.
func BenchmarkLogAndApply(b *testing.B) {
	vs, err := Create(vfs.NewMem(), testDir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var written int64
	for i := 0; b.Loop(); i++ {
		before := vs.manifest.Size()
		e := &VersionEdit{LogNum: vs.NextFileNum(), Added: []NewFile{{Level: 0, Meta: tableFor(vs.NextFileNum(), "a", "z", 1)}}}
		if i%8 == 7 { // keep L0 small: move everything to a fresh L1 table
			v := vs.Current()
			e.Deleted = map[DeletedFile]bool{}
			for _, f := range v.Levels[0] {
				e.Deleted[DeletedFile{Level: 0, FileNum: f.FileNum}] = true
			}
			v.Unref()
			e.Added = []NewFile{{Level: 2, Meta: tableFor(vs.NextFileNum(), fmt.Sprintf("%08d-a", i), fmt.Sprintf("%08d-z", i), 1)}}
		}
		if err := vs.LogAndApply(e); err != nil {
			b.Fatal(err)
		}
		if after := vs.manifest.Size(); after > before {
			written += after - before
		}
		vs.TakeObsolete()
	}
	b.ReportMetric(float64(written)/float64(b.N), "manifest-bytes/op")
}

func BenchmarkVersionEditDecode(b *testing.B) {
	e := &VersionEdit{LogNum: 9, NextFileNum: 100, LastSeq: 12345}
	for i := range 20 {
		e.Added = append(e.Added, NewFile{Level: 1, Meta: tableFor(uint64(i+1), fmt.Sprintf("user-key-%08d", i*2), fmt.Sprintf("user-key-%08d", i*2+1), 1)})
	}
	enc := e.Encode(nil)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	var d VersionEdit
	for b.Loop() {
		if err := d.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
