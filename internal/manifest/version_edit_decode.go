package manifest

import (
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// Decode replaces e with the edit encoded in b. Every length is checked
// against the bytes present before anything is sliced or allocated, so the
// largest allocation is bounded by len(b). Keys are copied: b may be
// reused by the caller. Errors wrap base.ErrCorruption and give the byte
// offset inside b; the caller adds the file name.
func (e *VersionEdit) Decode(b []byte) error {
	*e = VersionEdit{}
	d := decoder{b: b}
	var seen [maxTag + 1]bool
	for d.off < len(d.b) {
		tagOff := d.off
		tag := d.uvarint("tag")
		if d.err != nil {
			break
		}
		if tag < tagFormat || tag > maxTag {
			return corruptf("unknown tag %d at byte %d", tag, tagOff)
		}
		// A scalar field given twice would make the edit's meaning depend
		// on which copy wins; Encode never writes that.
		if (tag <= tagLastSeq || tag == tagDBID) && seen[tag] {
			return corruptf("tag %d repeated at byte %d", tag, tagOff)
		}
		seen[tag] = true
		switch tag {
		case tagFormat:
			magic := d.bytes("format magic")
			v := d.uvarint("format version")
			if d.err == nil && string(magic) != formatMagic {
				return corruptf("bad magic %q at byte %d: not a monban manifest", magic, tagOff)
			}
			if d.err == nil && v != formatVersion {
				return corruptf("unsupported manifest format version %d at byte %d", v, tagOff)
			}
			e.FormatVersion = v
		case tagLogNum:
			e.LogNum = d.uvarint("log number")
		case tagNextFileNum:
			e.NextFileNum = d.uvarint("next file number")
		case tagLastSeq:
			e.LastSeq = d.seq("last sequence")
		case tagCompactPointer:
			level := d.level()
			key := d.key("compact pointer")
			e.CompactPointers = append(e.CompactPointers, CompactPointer{Level: level, Key: key})
		case tagDeletedFile:
			df := DeletedFile{Level: d.level(), FileNum: d.uvarint("deleted file number")}
			if d.err != nil {
				break
			}
			if e.Deleted == nil {
				e.Deleted = make(map[DeletedFile]bool)
			}
			if e.Deleted[df] {
				return corruptf("file %06d deleted twice from L%d at byte %d", df.FileNum, df.Level, tagOff)
			}
			e.Deleted[df] = true
		case tagNewFile, tagNewTable:
			nf := d.newFile()
			if tag == tagNewTable {
				nf.Meta.TableID = d.fixed64("table id")
				// 0 means "no id" and is written as tag 7: a tag 8 holding
				// it is not an encoding Encode produces.
				if d.err == nil && nf.Meta.TableID == 0 {
					return corruptf("table id 0 in a tag %d record at byte %d", tagNewTable, tagOff)
				}
			}
			if d.err != nil {
				break
			}
			if err := nf.Meta.validate(); err != nil {
				return corruptf("new file at byte %d: %v", tagOff, err)
			}
			e.Added = append(e.Added, nf)
		case tagDBID:
			e.DBID = d.fixed64("DB id")
			if d.err == nil && e.DBID == 0 {
				return corruptf("DB id 0 at byte %d", tagOff)
			}
		case tagFormerDBID:
			f := FormerDBID{ID: d.fixed64("former DB id")}
			f.Shared = d.seq("former DB's shared sequence number")
			if d.err != nil {
				break
			}
			// Sorted without repeats, as Encode writes them: one encoding.
			if n := len(e.FormerDBIDs); f.ID == 0 || n > 0 && f.ID <= e.FormerDBIDs[n-1].ID {
				return corruptf("former DB id %016x out of order, or 0, at byte %d", f.ID, tagOff)
			}
			e.FormerDBIDs = append(e.FormerDBIDs, f)
		}
		if d.err != nil {
			break
		}
	}
	if d.err != nil {
		return d.err
	}
	return nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("manifest: version edit: "+format+": %w", append(args, base.ErrCorruption)...)
}

// decoder reads fields from b, remembering the first error so that the
// field-by-field code above stays linear; after an error every read
// returns a zero value.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = corruptf("%s truncated or overlong at byte %d", what, d.off)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) fixed64(what string) uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail(what)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *decoder) seq(what string) base.SeqNum {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(base.MaxSeqNum) {
		d.err = corruptf("%s %d beyond the 56-bit range at byte %d", what, v, d.off)
	}
	return base.SeqNum(v)
}

func (d *decoder) level() int {
	v := d.uvarint("level")
	if d.err == nil && v >= NumLevels {
		d.err = corruptf("level %d out of range at byte %d", v, d.off)
		return 0
	}
	return int(v)
}

// bytes returns a length-prefixed byte string aliasing d.b; the length is
// bounded by the bytes left before it is used.
func (d *decoder) bytes(what string) []byte {
	n := d.uvarint(what)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.err = corruptf("%s of %d bytes overruns the edit (%d left) at byte %d", what, n, len(d.b)-d.off, d.off)
		return nil
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s
}

// key decodes a length-prefixed internal key into memory of its own.
func (d *decoder) key(what string) base.InternalKey {
	enc := d.bytes(what)
	if d.err != nil {
		return base.InternalKey{}
	}
	k, err := base.DecodeInternalKey(enc)
	if err != nil {
		d.err = fmt.Errorf("manifest: version edit: %s before byte %d: %w", what, d.off, err)
		return base.InternalKey{}
	}
	if !k.Kind().Valid() {
		d.err = corruptf("%s has unknown kind %d before byte %d", what, uint8(k.Kind()), d.off)
		return base.InternalKey{}
	}
	k.UserKey = append([]byte(nil), k.UserKey...)
	return k
}

func (d *decoder) newFile() NewFile {
	level := d.level()
	m := &FileMetadata{}
	m.FileNum = d.uvarint("file number")
	m.Size = d.uvarint("file size")
	m.Smallest = d.key("smallest key")
	m.Largest = d.key("largest key")
	m.SmallestSeq = d.seq("smallest seq")
	m.LargestSeq = d.seq("largest seq")
	m.NumEntries = d.uvarint("entry count")
	m.NumDeletions = d.uvarint("deletion count")
	return NewFile{Level: level, Meta: m}
}
