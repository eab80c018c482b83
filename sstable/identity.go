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

// checkFooterFits: a table of size bytes is at least a footer long.
func checkFooterFits(size uint64) error {
	if size < footerLen {
		return fmt.Errorf("file of %d bytes is shorter than the %d-byte footer: %w", size, footerLen, base.ErrCorruption)
	}
	return nil
}

// identityTail is how much of a table's end CheckIdentity reads at once:
// the footer and the properties block the writer puts just before it,
// which is a few hundred bytes (its largest property, the filter's page
// checksums, grows by 4 bytes per 4 KiB of filter: a 4 MiB table's are
// about 1 KiB). A larger or displaced properties block costs a second read.
const identityTail = 4 << 10

// CheckIdentity checks that f is the table t names, as Open would, without
// decoding its index or filter: the size, then one read of the file's
// tail for the footer (magic, checksum, format version, handles in
// bounds) and the properties block (checksum, decoding, agreement with
// the footer on the filter), whose table id must be t's. It returns the
// properties. Its errors are Open's, word for word (the same checks,
// wrapping base.ErrCorruption and naming the file); but a table that
// passes may still fail Open, on damage in its index, filter or
// range-deletion blocks, which it does not read. It does not close f.
//
// It is what lsm's Open asks of every live table before serving reads
// (issue 30): reading and decoding every index and filter of a large DB
// took most of Open's time.
func CheckIdentity(f vfs.File, t TableRef) (*Properties, error) {
	name := TableFileName(t.FileNum)
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("sstable %s: %w", name, err)
	}
	if err := checkSize(name, uint64(size), t.Size); err != nil {
		return nil, err
	}
	p, err := readTail(f, uint64(size))
	if err != nil {
		return nil, fmt.Errorf("sstable %s: %w", name, err)
	}
	if err := checkTableID(name, p.TableID, t.TableID); err != nil {
		return nil, err
	}
	return p, nil
}

// readTail reads and verifies the footer and the properties block of the
// table in f, size bytes long.
func readTail(f vfs.File, size uint64) (*Properties, error) {
	if err := checkFooterFits(size); err != nil {
		return nil, err
	}
	start := size - min(size, identityTail)
	tail := make([]byte, size-start)
	if err := readFullAt(f, tail, start); err != nil {
		return nil, err
	}
	ft, err := decodeFooter(tail[len(tail)-footerLen:], size-footerLen)
	if err != nil {
		return nil, err
	}
	h := ft.props
	var b []byte
	if h.offset >= start { // decodeFooter bounded h.end() by the footer's start
		b = tail[h.offset-start : h.end()-start]
	} else {
		b = make([]byte, h.length+blockTrailerLen)
		if err := readFullAt(f, b, h.offset); err != nil {
			return nil, fmt.Errorf("properties block at %d: %w", h.offset, err)
		}
	}
	p, err := decodePropsBlock(b, h)
	if err != nil {
		return nil, err
	}
	if err := checkFilterLayout(ft, &p); err != nil {
		return nil, err
	}
	p.FileSize, p.formatVersion = size, ft.version
	return &p, nil
}

// HasMagic reports whether f ends in the footer magic of a monban table
// ("MONBANST"): a file that does not was written by another program, or
// lost its footer. It checks nothing else; Open verifies. The error is the
// file system's, when it could not tell: a failed read is not an answer.
func HasMagic(f vfs.File) (bool, error) {
	size, err := f.Size()
	if err != nil {
		return false, err
	}
	if size < footerLen {
		return false, nil
	}
	var b [8]byte
	if _, err := f.ReadAt(b[:], size-8); err != nil {
		return false, err
	}
	return binary.LittleEndian.Uint64(b[:]) == tableMagic, nil
}
