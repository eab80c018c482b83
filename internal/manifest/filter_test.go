package manifest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/offheap"
)

// TestFilterHeldUntilObsolete: the filter FileMetadata keeps holds a
// reference of its own on the filter's memory, so it stays readable after
// the reader it came from released its own, and the reference goes, and
// the memory with it, when the table leaves the last live Version.
func TestFilterHeldUntilObsolete(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	b := filter.NewCacheLineBuilder(10)
	var keys [][]byte
	for i := range 20000 {
		keys = append(keys, fmt.Appendf(nil, "key%06d", i))
		b.AddKey(keys[i])
	}
	enc := b.Finish(nil)
	before := offheap.Stats()
	buf := offheap.New(len(enc))
	copy(buf.Bytes(), enc)
	readers, err := filter.OpenCacheLineIn(buf, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if offheap.Stats().Mapped == before.Mapped {
		t.Fatal("the filter is not off the heap: the test checks nothing")
	}

	vs, num := setWithOneTable(t)
	v := vs.Current()
	f := v.Levels[0][0]
	f.SetFilter(readers)
	f.SetFilter(readers) // the first call wins, and takes one reference only
	readers.Release()    // the reader closes
	for _, k := range keys {
		if !f.Filter().MayContain(k) {
			t.Fatalf("the metadata's filter lost %q after the reader released its own", k)
		}
	}
	if err := vs.LogAndApply(&VersionEdit{Deleted: map[DeletedFile]bool{{Level: 0, FileNum: num}: true}}); err != nil {
		t.Fatal(err)
	}
	if offheap.Stats().Mapped == before.Mapped {
		t.Fatal("the filter was freed while a live Version holds its table")
	}
	v.Unref()
	if got := offheap.Stats(); got.Mapped != before.Mapped || got.Leaked != before.Leaked || f.Filter() != nil {
		t.Fatalf("after the table left the last live Version: %+d bytes mapped, %+d leaked, filter still set %t; want none",
			got.Mapped-before.Mapped, got.Leaked-before.Leaked, f.Filter() != nil)
	}
}
