package lsm

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestReadaheadFileMatchesFile: any sequence of reads through the window
// returns exactly what the file holds, including at and past its end.
func TestReadaheadFileMatchesFile(t *testing.T) {
	fs := vfs.NewMem()
	data := make([]byte, 3*compactionReadahead+1234)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	w, _ := fs.Create("/f")
	w.Write(data)
	w.Close()
	f, _ := fs.Open("/f")
	defer f.Close()
	ra, err := newReadaheadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(0)
	for i := range 2000 {
		n := rng.IntN(9000)
		if i%7 == 0 {
			off = rng.Int64N(int64(len(data)) + 10)
		}
		p := make([]byte, n)
		got, err := ra.ReadAt(p, off)
		want := 0
		if off < int64(len(data)) {
			want = copy(make([]byte, n), data[off:])
		}
		if got != want || !bytes.Equal(p[:got], data[min(off, int64(len(data))):min(off, int64(len(data)))+int64(got)]) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d bytes, want %d", n, off, got, want)
		}
		if (got < n) != (err == io.EOF) {
			t.Fatalf("ReadAt(%d bytes at %d): %d bytes with err %v", n, off, got, err)
		}
		off += int64(got)
	}
}
