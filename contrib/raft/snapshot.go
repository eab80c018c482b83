package raft

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"path/filepath"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// snapshotMagic opens every snapshot stream (doc.go, "Snapshot stream");
// its last byte is the format's version.
const snapshotMagic = "monbanS\x01"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot checkpoints the DB (lsm.DB.Checkpoint: hard links to its
// tables, its memtables as a WAL) into a directory of root, which the
// returned snapshot streams and then removes. It costs no copy of the
// tables, so raft's FSM goroutine, which Snapshot holds, is soon free.
//
// It first makes the state durable up to the snapshot's last command,
// with one synced write: the state a restart finds then holds all a
// snapshot of its own that raft keeps holds, so a node may run with raft's
// NoSnapshotRestoreOnStart, which replays only the entries after that
// snapshot over it, and restart without a restore (CatchUp covers a
// snapshot a leader sent, and tells an own one ahead only by barriers
// and no-ops from it).
func (f *FSM) Snapshot() (hraft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, lsm.ErrClosed
	}
	applied := binary.BigEndian.AppendUint64(nil, f.applied.Load())
	if err := f.db.Put([]byte(appliedKey), applied, lsm.Sync); err != nil {
		return nil, fmt.Errorf("monban raft: fsm snapshot: %w", err)
	}
	dir := filepath.Join(f.root, fmt.Sprintf("snapshot-%06d", f.snaps.Add(1)))
	if err := f.db.Checkpoint(dir); err != nil {
		return nil, errors.Join(fmt.Errorf("monban raft: fsm snapshot: %w", err), removeAll(f.fs, dir))
	}
	return &fsmSnapshot{fs: f.fs, dir: dir}, nil
}

// fsmSnapshot is a checkpoint directory waiting to be streamed.
type fsmSnapshot struct {
	fs  vfs.FS
	dir string
}

// Persist writes the checkpoint's files to sink as a snapshot stream.
func (s *fsmSnapshot) Persist(sink hraft.SnapshotSink) error {
	if err := writeSnapshot(s.fs, s.dir, sink); err != nil {
		return errors.Join(err, sink.Cancel())
	}
	return sink.Close()
}

// Release removes the checkpoint.
func (s *fsmSnapshot) Release() { _ = removeAll(s.fs, s.dir) }

// writeSnapshot writes the files of dir, but its lock, to w: the magic,
// each file as name and contents, an empty name, and the CRC-32C of it
// all.
func writeSnapshot(fsys vfs.FS, dir string, w io.Writer) error {
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("monban raft: fsm snapshot: %w", err)
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	bw.WriteString(snapshotMagic)
	for _, name := range names { // List sorts them
		if name == lockName {
			continue
		}
		if err := writeSnapshotFile(fsys, filepath.Join(dir, name), name, bw); err != nil {
			return fmt.Errorf("monban raft: fsm snapshot: %s: %w", name, err)
		}
	}
	bw.Write(binary.AppendUvarint(nil, 0))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("monban raft: fsm snapshot: %w", err)
	}
	if _, err := w.Write(crc.Sum(nil)); err != nil {
		return fmt.Errorf("monban raft: fsm snapshot: %w", err)
	}
	return nil
}

func writeSnapshotFile(fsys vfs.FS, path, name string, bw *bufio.Writer) error {
	r, err := fsys.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	size, err := r.Size()
	if err != nil {
		return err
	}
	hdr := binary.AppendUvarint(nil, uint64(len(name)))
	hdr = append(hdr, name...)
	bw.Write(binary.AppendUvarint(hdr, uint64(size)))
	// CopyN, not Copy: the size is in the stream already, and a file
	// that changed length would make the stream lie.
	_, err = io.CopyN(bw, r, size)
	return err
}

// snapshotReader reads a snapshot stream, summing every byte it reads.
type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
}

func (s *snapshotReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.crc.Write(p[:n])
	return n, err
}

func (s *snapshotReader) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.crc.Write([]byte{b})
	}
	return b, err
}

// errBadSnapshot is wrapped by every error of a stream that does not
// decode or whose checksum does not match.
var errBadSnapshot = errors.New("monban raft: bad snapshot stream")

// readSnapshot reads a snapshot stream from r into dir, syncing each file,
// and returns once the stream's checksum matched and nothing followed it.
func readSnapshot(fsys vfs.FS, dir string, r io.Reader) error {
	s := &snapshotReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)}
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(s, magic); err != nil || string(magic) != snapshotMagic {
		return fmt.Errorf("%w: magic %q, %v", errBadSnapshot, magic, err)
	}
	seen := map[string]bool{}
	for {
		n, err := binary.ReadUvarint(s)
		if err != nil {
			return fmt.Errorf("%w: name length: %v", errBadSnapshot, err)
		}
		if n == 0 {
			break
		}
		if n > 255 {
			return fmt.Errorf("%w: name of %d bytes", errBadSnapshot, n)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(s, name); err != nil {
			return fmt.Errorf("%w: name: %v", errBadSnapshot, err)
		}
		if !isPlainName(string(name)) || string(name) == lockName || seen[string(name)] {
			return fmt.Errorf("%w: file name %q", errBadSnapshot, name)
		}
		seen[string(name)] = true
		size, err := binary.ReadUvarint(s)
		if err != nil {
			return fmt.Errorf("%w: size of %s: %v", errBadSnapshot, name, err)
		}
		if err := readSnapshotFile(fsys, filepath.Join(dir, string(name)), s, size); err != nil {
			return fmt.Errorf("monban raft: fsm restore: %s: %w", name, err)
		}
	}
	want := s.crc.Sum32()
	var sum [5]byte // the checksum, and a byte that must not be there
	n, err := io.ReadFull(s.r, sum[:])
	switch {
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		// Not the end: what followed the checksum is unknown.
		return fmt.Errorf("monban raft: fsm restore: reading the checksum: %w", err)
	case n != 4:
		return fmt.Errorf("%w: %d bytes where the 4-byte checksum ends it", errBadSnapshot, n)
	}
	if got := binary.BigEndian.Uint32(sum[:4]); got != want {
		return fmt.Errorf("%w: checksum %08x, computed %08x", errBadSnapshot, got, want)
	}
	return nil
}

func readSnapshotFile(fsys vfs.FS, path string, r io.Reader, size uint64) error {
	w, err := fsys.Create(path)
	if err != nil {
		return err
	}
	n, err := io.CopyN(w, r, int64(min(size, 1<<62)))
	if err == io.EOF {
		err = fmt.Errorf("%w: %d of its %d bytes", errBadSnapshot, n, size)
	}
	if err == nil {
		err = w.Sync()
	}
	return errors.Join(err, w.Close())
}
