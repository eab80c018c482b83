package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// logFormatV1 is the first byte of an entry stored alone under a 'l' key,
// the layout before runs (doc.go, "Log entry format"); the Store reads it
// and writes it no more. runFormatV2 is the first byte of a run (doc.go,
// "Run format"), what StoreLogs writes. A new encoding takes a new
// version; the decoders refuse versions they do not know rather than
// guess.
const (
	logFormatV1 = 1
	runFormatV2 = 2
)

// appendEntry appends l's fields as both formats hold them, after the
// version byte of one and inside the length prefix of the other. The index
// is not among them: a 'l' key holds it, and a run's key and count.
func appendEntry(dst []byte, l *hraft.Log) []byte {
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

// decodeLog decodes p, the value of the 'l' key of index, into l.
func decodeLog(index uint64, p []byte, l *hraft.Log) error {
	if len(p) == 0 || p[0] != logFormatV1 {
		if len(p) == 0 {
			return fmt.Errorf("%w: index %d: empty", errBadLog, index)
		}
		return fmt.Errorf("%w: index %d: unknown format version %d", errBadLog, index, p[0])
	}
	return decodeEntry(index, p[1:], l)
}

// decodeEntry decodes p, appendEntry's encoding of the entry at index,
// into l. Data and Extensions are copies: p may alias memory the engine
// reuses. An empty Data or Extensions decodes as nil.
func decodeEntry(index uint64, p []byte, l *hraft.Log) error {
	d := decoder{p: p}
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

// runHeaderMax bounds a run's header: the version byte and the count.
const runHeaderMax = 1 + binary.MaxVarintLen64

// A run is the entries first..last stored as one value under the key of
// last (doc.go, "Run format"); body is the entries, each length-prefixed.
type run struct {
	first, last uint64
	body        []byte
}

// parseRun reads the header of v, the value stored under the run key of
// last. It checks the count against the key and leaves the entries to
// entry, which reads only as far as the one it is asked for.
func parseRun(last uint64, v []byte) (run, error) {
	if len(v) == 0 || v[0] != runFormatV2 {
		if len(v) == 0 {
			return run{}, fmt.Errorf("%w: run ending at %d: empty", errBadLog, last)
		}
		return run{}, fmt.Errorf("%w: run ending at %d: unknown format version %d", errBadLog, last, v[0])
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n == 0 || n > last {
		return run{}, fmt.Errorf("%w: run ending at %d: count %d does not fit", errBadLog, last, n)
	}
	return run{first: last - n + 1, last: last, body: v[1+k:]}, nil
}

// seek returns the body from the entry at index on, index in
// [first, last].
func (r run) seek(index uint64) ([]byte, error) {
	p := r.body
	for i := r.first; i < index; i++ {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, fmt.Errorf("%w: run %d-%d: entry %d: %v", errBadLog, r.first, r.last, i, errShort)
		}
		p = p[k+int(n):]
	}
	return p, nil
}

// decode decodes the entry at index, in [first, last], into l. The last
// entry must end the value: reading it checks that nothing follows.
func (r run) decode(index uint64, l *hraft.Log) error {
	p, err := r.seek(index)
	if err != nil {
		return err
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return fmt.Errorf("%w: run %d-%d: entry %d: %v", errBadLog, r.first, r.last, index, errShort)
	}
	if index == r.last && len(p) != k+int(n) {
		return fmt.Errorf("%w: run %d-%d: %d bytes after the last entry", errBadLog, r.first, r.last, len(p)-k-int(n))
	}
	return decodeEntry(index, p[k:k+int(n)], l)
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
