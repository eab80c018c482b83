package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestTableWithAnotherTablesBlocks: two tables of the same shape (the same
// number of keys and values of the same lengths, so their blocks end
// where their properties start), and the first given every block of the
// second: all but its properties and footer, the bytes that name it.
// Each block keeps a valid CRC of its bytes; before blocks were sealed
// to their table (format version 4), the DB served the second table's
// filter and data as the first's, and Get said "not found" for a key
// acknowledged and flushed. Now every answer is the key's value or
// ErrCorruption, with both filter scopes (TreeWide reads the key-hash
// block too).
func TestTableWithAnotherTablesBlocks(t *testing.T) {
	for _, scope := range []FilterScope{PerTable, TreeWide} {
		mem := vfs.NewMem()
		opts := &Options{FS: mem, BlockSize: 256, Compression: NoCompression, FilterScope: scope, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		d, err := Open("/db", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, letter := range "ab" {
			for i := range 300 {
				if err := d.Put(fmt.Appendf(nil, "%c%05d", letter, i), fmt.Appendf(nil, "%c-value-%05d", letter, i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		tables := filesOf(t, mem, "/db", manifest.KindTable)
		if len(tables) != 2 {
			t.Fatalf("tables %v, want two", tables)
		}
		a, b := readFile(t, mem, "/db/"+tables[0]), readFile(t, mem, "/db/"+tables[1])
		// The footer's properties handle: everything before it is blocks.
		props := binary.LittleEndian.Uint64(a[len(a)-64+32:])
		if pb := binary.LittleEndian.Uint64(b[len(b)-64+32:]); props != pb {
			t.Fatalf("the tables' properties start at %d and %d: not the same shape", props, pb)
		}
		copy(a[:props], b[:props])
		rewrite(t, mem, "/db/"+tables[0], a)

		d, err = Open("/db", opts)
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("%v: Open: %v does not wrap ErrCorruption", scope, err)
			}
			continue
		}
		caught := 0
		for i := range 300 {
			k := fmt.Appendf(nil, "a%05d", i)
			v, err := d.Get(k)
			switch {
			case errors.Is(err, ErrCorruption):
				caught++
			case err != nil || string(v) != fmt.Sprintf("a-value-%05d", i):
				t.Fatalf("%v: Get(%s) = %q, %v: another table's answer", scope, k, v, err)
			}
		}
		if err := d.Close(); err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatal(err)
		}
		if caught == 0 {
			t.Fatalf("%v: every key read without an error from a table of another's blocks", scope)
		}
	}
}
