package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// logFormatV1 is the first byte of every encoded log entry (doc.go, "Log
// entry format"). A new encoding takes a new version; decodeLog refuses
// versions it does not know rather than guess.
const logFormatV1 = 1

// appendLog appends l's encoding to dst. The index is not in it: it is the
// key.
func appendLog(dst []byte, l *hraft.Log) []byte {
	dst = append(dst, logFormatV1)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	// Seconds and nanoseconds rather than UnixNano: the zero time.Time
	// (year 1, what a Log built by hand carries) is outside UnixNano's range.
	dst = binary.AppendVarint(dst, l.AppendedAt.Unix())
	dst = binary.AppendUvarint(dst, uint64(l.AppendedAt.Nanosecond()))
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	return append(dst, l.Extensions...)
}

// errBadLog is wrapped by every decoding failure; it wraps lsm.ErrCorruption
// so that a caller tests one sentinel for any damaged bytes.
var errBadLog = fmt.Errorf("raft log entry: %w", lsm.ErrCorruption)

// decodeLog decodes p, the value stored under index, into l. Data and
// Extensions are copies: p may alias memory the engine reuses. An empty
// Data or Extensions decodes as nil.
func decodeLog(index uint64, p []byte, l *hraft.Log) error {
	if len(p) == 0 || p[0] != logFormatV1 {
		if len(p) == 0 {
			return fmt.Errorf("%w: index %d: empty", errBadLog, index)
		}
		return fmt.Errorf("%w: index %d: unknown format version %d", errBadLog, index, p[0])
	}
	d := decoder{p: p[1:]}
	term := d.uvarint()
	typ := d.byte()
	sec := d.varint()
	nsec := d.uvarint()
	data := d.bytes()
	ext := d.bytes()
	switch {
	case d.err != nil:
		return fmt.Errorf("%w: index %d: %v", errBadLog, index, d.err)
	case len(d.p) != 0:
		return fmt.Errorf("%w: index %d: %d bytes after the last field", errBadLog, index, len(d.p))
	case nsec >= uint64(time.Second):
		return fmt.Errorf("%w: index %d: %d nanoseconds", errBadLog, index, nsec)
	}
	*l = hraft.Log{Index: index, Term: term, Type: hraft.LogType(typ), Data: data, Extensions: ext}
	if t := time.Unix(sec, int64(nsec)).UTC(); !t.IsZero() {
		l.AppendedAt = t
	}
	return nil
}

// decoder reads the fields of an encoded value; the first failure sticks in
// err and every later read returns zero.
type decoder struct {
	p   []byte
	err error
}

var errShort = errors.New("value ends inside a field")

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.p = d.p[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.p)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.p = d.p[n:]
	return x
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.p) == 0 {
		d.err = errShort
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

// bytes reads a length-prefixed field and returns a copy of it, nil when
// it is empty.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.p)) {
		d.err = errShort
		return nil
	}
	var b []byte
	if n > 0 {
		b = append([]byte(nil), d.p[:n]...)
	}
	d.p = d.p[n:]
	return b
}
