package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestTableIDProperty: the id given to the writer comes back from Finish
// and from Open; a writer given 0 stores no id property at all.
func TestTableIDProperty(t *testing.T) {
	const id = 0x8a1c2b3d4e5f6071
	for _, shape := range []int{0, 1, 3} { // empty, small, many blocks
		es := randEntries(newRand(uint64(shape)), shape)
		opts := randOptions(newRand(uint64(shape)))
		opts.TableID = id
		data, p := buildTable(t, es, opts)
		r := openTable(t, data, nil)
		if p.TableID != id || r.Properties().TableID != id {
			t.Errorf("shape %d: Finish says id %#x, Open %#x; want %#x", shape, p.TableID, r.Properties().TableID, uint64(id))
		}
		r.Close()

		opts.TableID = 0
		data, p = buildTable(t, es, opts)
		if p.TableID != 0 || openTable(t, data, nil).Properties().TableID != 0 {
			t.Errorf("shape %d: table written without an id reads back id %#x", shape, p.TableID)
		}
		if bytes.Contains(data, []byte(propTableID)) {
			t.Errorf("shape %d: table written without an id stores %q", shape, propTableID)
		}
	}
}

// TestOpenChecksIdentity: Open compares the file with what the caller (the
// manifest) expects of it. Every mismatch is corruption, named in the
// error with both values; 0 means "do not check".
func TestOpenChecksIdentity(t *testing.T) {
	const id = 0x8a1c2b3d4e5f6071
	es := evenKeys(100)
	data, _ := buildTable(t, es, WriterOptions{TableID: id})
	noID, _ := buildTable(t, es, WriterOptions{})
	size := uint64(len(data))
	for _, c := range []struct {
		name      string
		data      []byte
		size, id  uint64
		wantError string // "" = opens
	}{
		{"nothing expected", data, 0, 0, ""},
		{"both match", data, size, id, ""},
		{"size only", data, size, 0, ""},
		{"id only", data, 0, id, ""},
		{"no id, none expected", noID, uint64(len(noID)), 0, ""},
		{"larger file", data, size - 1, id,
			fmt.Sprintf("000007.sst is %d bytes, the manifest says %d", size, size-1)},
		{"truncated file", data[:size-10], size, id,
			fmt.Sprintf("000007.sst is %d bytes, the manifest says %d", size-10, size)},
		{"truncated below the footer", data[:10], size, id,
			fmt.Sprintf("000007.sst is 10 bytes, the manifest says %d", size)},
		{"another table's id", data, size, id + 1,
			"000007.sst holds table id 0x8a1c2b3d4e5f6071, the manifest expects 0x8a1c2b3d4e5f6072: another table's file?"},
		{"no id where one is expected", noID, 0, id,
			"000007.sst holds no table id, the manifest expects 0x8a1c2b3d4e5f6071: another table's file?"},
	} {
		f := &memFile{data: c.data}
		r, err := Open(f, ReaderOptions{FileNum: 7, ExpectSize: c.size, ExpectTableID: c.id})
		switch {
		case c.wantError == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantError == "":
			r.Close()
		case err == nil:
			r.Close()
			t.Errorf("%s: opened; want error %q", c.name, c.wantError)
		case !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), c.wantError):
			t.Errorf("%s: error %q; want one wrapping ErrCorruption containing %q", c.name, err, c.wantError)
		case strings.Contains(err.Error(), "footer"):
			t.Errorf("%s: %q mentions the footer: the size check must come first", c.name, err)
		case !f.closed:
			t.Errorf("%s: failed Open left the file open", c.name)
		}
	}
}
