package sstable

import (
	"bytes"
	"testing"
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
