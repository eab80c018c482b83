package sstable

import (
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// A table's bytes can be perfectly valid and still be the wrong table: two
// files swapped, or one copied over another. Checksums cannot see that, and
// a read served by the wrong table answers wrongly without an error (a
// present key "not found"). So the caller tells Open what the manifest
// recorded — the file's size and the id drawn when the table was written
// (RocksDB checks SST unique ids the same way) — and a mismatch is
// corruption, naming both values.

// checkSize compares a table file's size with the expected one (0: not
// checked). Open runs it before reading the footer, so a truncated file is
// reported as truncated rather than as a bad footer.
func checkSize(name string, size, want uint64) error {
	if want == 0 || size == want {
		return nil
	}
	return fmt.Errorf("sstable %s is %d bytes, the manifest says %d: %w", name, size, want, base.ErrCorruption)
}

// checkTableID compares the id in a table's properties with the expected
// one (0: not checked). A table without an id cannot prove it is the one
// expected, so that is a mismatch too.
func checkTableID(name string, id, want uint64) error {
	switch {
	case want == 0 || id == want:
		return nil
	case id == 0:
		return fmt.Errorf("sstable %s holds no table id, the manifest expects %#016x: another table's file?: %w", name, want, base.ErrCorruption)
	}
	return fmt.Errorf("sstable %s holds table id %#016x, the manifest expects %#016x: another table's file?: %w", name, id, want, base.ErrCorruption)
}

// HasMagic reports whether f ends in the footer magic of a monban table
// ("MONBANST"): a file that does not was written by another program, or
// lost its footer. It checks nothing else; Open verifies.
func HasMagic(f vfs.File) bool {
	size, err := f.Size()
	if err != nil || size < footerLen {
		return false
	}
	var b [8]byte
	if _, err := f.ReadAt(b[:], size-8); err != nil {
		return false
	}
	return binary.LittleEndian.Uint64(b[:]) == tableMagic
}
