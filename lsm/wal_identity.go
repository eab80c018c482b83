package lsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// A WAL's first record is its identity: the 12 bytes of a batch header
// whose count is 0, the DB's id (manifest.VersionSet.DBID) in the place of
// the sequence number. No batch of no entries is ever written (write
// returns first), so it is no batch's; and one that predates it reads it
// as an empty batch. Open refuses a WAL that begins with another DB's
// identity, or with none while the manifest has one: a file of another DB
// under a live WAL's name, whose records verify (checksums are seeded
// with the log's number and offsets alone), would replay as this DB's.

// A rotation ends the WAL it retires with a successor record, just before
// its seal: 20 bytes, the DB's id and a count of 0 as in the identity
// record, then the number of the WAL that took over, which the rotation
// created (and made durable) before it. A sealed WAL then says whether a
// newer one took its place, or a Close ended it: without the record, a
// live WAL deleted outright after the last one holding records would
// leave a directory that reads as a clean Close's, and its commits would
// be gone without a word. The record is a WAL's last; Open refuses a
// batch after it, and a successor it names that is missing.

// appendWALSuccessor appends the successor record naming WAL next, of the
// DB id, to dst.
func appendWALSuccessor(dst []byte, id, next uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendWALIdentity(dst, id), next)
}

// walSuccessor returns the WAL a successor record names; ok is false for
// any other record.
func walSuccessor(rec []byte) (next uint64, ok bool) {
	if len(rec) != batchHeaderLen+8 || binary.LittleEndian.Uint32(rec[8:12]) != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[batchHeaderLen:]), true
}

// appendWALIdentity appends the identity record of the DB id to dst.
func appendWALIdentity(dst []byte, id uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, id)
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// walIdentity returns the DB id of an identity record; ok is false for a
// batch.
func walIdentity(rec []byte) (id uint64, ok bool) {
	if len(rec) != batchHeaderLen || binary.LittleEndian.Uint32(rec[8:12]) != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[0:8]), true
}

// checkWALIdentity checks record rec of the WAL called name, its first if
// first, against want, the manifest's DB id: every WAL a DB writes once
// its manifest has an id begins with it, and no other record is an
// identity (walIdentity). A manifest without one (0) vouches for no
// identity, or lack of one: written before DB ids, or a new DB's before
// its first Open logged one.
func checkWALIdentity(name string, rec []byte, first bool, want uint64) error {
	id, ok := walIdentity(rec)
	switch {
	case ok && !first:
		return fmt.Errorf("monban: %s holds an identity record after its first record: %w", name, ErrCorruption)
	case want == 0 || !first:
		return nil
	case !ok:
		return fmt.Errorf("monban: %s begins without this DB's identity: another DB's WAL (or an older monban's) under a live WAL's name; Repair sets it aside: %w",
			name, ErrCorruption)
	case id != want:
		return fmt.Errorf("monban: %s is another DB's WAL (DB id %016x, this DB's %016x) under a live WAL's name; Repair sets it aside: %w",
			name, id, want, ErrCorruption)
	}
	return nil
}

// checkUnidentifiedWAL checks live WAL f (name, number num), in which no
// record verified, not even an identity, against id, the manifest's: the
// DB wrote its identity record first, so a crash before that reached the
// disk leaves of it a prefix of its frame, perhaps empty, followed by
// what the file held before: zeros (a new file, or space reserved ahead),
// or an older log's bytes (a recycled file): that log's first fragment at
// offset 0, or, the older log having begun with an identity frame of the
// same length, its second fragment right after it. An older log that
// begins with another DB's identity was not this DB's. Anything else is
// not this DB's WAL: another DB's, whose records verify only under its
// own number, or another program's file, and replaying it as empty would
// lose what the live WAL held.
func checkUnidentifiedWAL(f vfs.File, name string, num, id uint64) error {
	frame := wal.FirstRecordFrame(num, appendWALIdentity(nil, id))
	head := make([]byte, len(frame))
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("monban: reading %s: %w", name, err)
	}
	k := 0
	for k < n && head[k] == frame[k] {
		k++
	}
	if zeros, err := zerosFrom(f, int64(k)); err != nil || zeros {
		return readErr(name, err)
	}
	if k == 0 {
		older, ok, err := wal.OlderLog(f, num)
		if err != nil {
			return readErr(name, err)
		}
		if ok {
			return checkOlderLog(f, name, older, id)
		}
	}
	if _, ok, err := wal.OlderLogAt(f, int64(len(frame)), num); err != nil || ok {
		return readErr(name, err)
	}
	return fmt.Errorf("monban: %s holds no record of its own, nor what a crash leaves of a new or recycled WAL: another DB's WAL, or another program's file, under a live WAL's name; Repair sets it aside: %w",
		name, ErrCorruption)
}

// checkOlderLog refuses WAL file f (name) whose first fragment is older
// log num's if that log begins with another identity than id.
func checkOlderLog(f vfs.File, name string, num, id uint64) error {
	rec, err := wal.NewRecyclableReader(fromStart(f), name, num).Next()
	if err != nil {
		return nil // a first record that does not read whole is no identity: one fragment holds that
	}
	if older, ok := walIdentity(rec); ok && older != id {
		return fmt.Errorf("monban: %s holds another DB's WAL (log %06d, DB id %016x, this DB's %016x) under a live WAL's name; Repair sets it aside: %w",
			name, num, older, id, ErrCorruption)
	}
	return nil
}

// ownLog reports whether WAL file n, below the log number, is one this DB
// wrote, which the manifest then proves obsolete: empty or zeros (created,
// never written), or a log whose first record verifies as its own, or
// whose first fragment as an older log's (a reused file), unless that
// record is another DB's identity. Another program's file, or another DB's
// WAL of another number, it leaves alone, and says so; also a file it
// cannot read.
func (d *DB) ownLog(n uint64) bool {
	name := manifest.MakeFilename(manifest.KindLog, n)
	own, err := func() (bool, error) {
		f, err := d.fs.Open(d.path(manifest.KindLog, n))
		if err != nil {
			return false, err
		}
		defer f.Close()
		num := n
		older, ok, err := wal.OlderLog(f, n)
		if err != nil {
			return false, err
		}
		if ok {
			num = older
		}
		rec, err := wal.NewRecyclableReader(fromStart(f), name, num).Next()
		switch {
		case err == nil:
			id, isID := walIdentity(rec)
			return !isID || d.vs.DBID() == 0 || id == d.vs.DBID(), nil
		case errors.Is(err, io.EOF) || errors.Is(err, ErrCorruption):
			return zerosFrom(f, 0)
		}
		return false, err
	}()
	if !own {
		d.opts.Logger.Warn("monban: a file below the log number that is not this DB's WAL: left alone", "file", name, "err", err)
	}
	return own
}

// fromStart returns a reader of f from its first byte, whatever f's read
// offset: a file read twice, each time by a reader of its own, is read
// from its start each time, not on from where the last reader stopped.
func fromStart(f io.ReaderAt) io.Reader { return io.NewSectionReader(f, 0, math.MaxInt64) }

// zerosFrom reports whether every byte of f from off on is zero.
func zerosFrom(f vfs.File, off int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, off)
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		off += int64(n)
		if errors.Is(err, io.EOF) || n == 0 && err == nil {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// readErr wraps a read error of file name, nil for none.
func readErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("monban: reading %s: %w", name, err)
}
