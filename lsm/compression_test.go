package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestCompression: snappy (the default) makes a DB of compressible values
// much smaller than NoCompression does, and both read back the same bytes.
func TestCompression(t *testing.T) {
	value := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "value %d ", i%7), 20) }
	size := func(c Compression) uint64 {
		d := openMem(t, vfs.NewMem(), &Options{Compression: c})
		defer d.Close()
		for i := range 3000 {
			if err := d.Put(fmt.Appendf(nil, "k%05d", i), value(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Compact(); err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			if v, err := d.Get(fmt.Appendf(nil, "k%05d", i)); err != nil || !bytes.Equal(v, value(i)) {
				t.Fatalf("compression %d: Get(k%05d) = %.20q, %v", c, i, v, err)
			}
		}
		var n uint64
		for _, l := range d.Stats().Levels {
			n += l.Bytes
		}
		return n
	}
	snappy, def, none := size(SnappyCompression), size(DefaultCompression), size(NoCompression)
	t.Logf("tables: snappy %d bytes, default %d, none %d", snappy, def, none)
	if def < snappy-snappy/100 || def > snappy+snappy/100 { // table ids vary in length
		t.Fatalf("default compression wrote %d bytes, snappy %d: the default is not snappy", def, snappy)
	}
	if snappy*3 > none {
		t.Fatalf("snappy tables %d bytes, uncompressed %d: want at most a third", snappy, none)
	}
	if _, err := Open("/x", &Options{FS: vfs.NewMem(), Compression: 7}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Open with Compression 7: %v, want ErrInvalidOptions", err)
	}
}
