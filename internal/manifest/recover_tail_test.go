package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// tailDB is a manifest of a few edits with the state after each, for
// judging what recovery makes of every prefix and every flipped bit.
type tailDB struct {
	mem    *vfs.MemFS
	path   string
	name   string
	bytes  []byte
	states []*Version // states[i]: after record i (0 is the snapshot)
	starts []int64    // where record i starts
	frags  []int64    // where each fragment of the last record starts
}

// newTailDB logs n small flushes; with big, the last edit adds enough
// tables with long keys to span three blocks (FIRST, MIDDLE, LAST).
func newTailDB(t *testing.T, n int, big bool) *tailDB {
	d := &tailDB{mem: vfs.NewMem()}
	vs, err := Create(d.mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	d.states = append(d.states, vs.Current())
	for i := range n {
		e := &VersionEdit{Added: []NewFile{{Level: 0, Meta: tableFor(vs.NextFileNum(), "a", "z", base.SeqNum(i+1))}}}
		if big && i == n-1 {
			for j := range 200 {
				k := fmt.Sprintf("%04d", j) + strings.Repeat("k", 200)
				e.Added = append(e.Added, NewFile{Level: 0, Meta: tableFor(vs.NextFileNum(), k, k, base.SeqNum(i+1))})
			}
		}
		if err := vs.LogAndApply(e); err != nil {
			t.Fatal(err)
		}
		d.states = append(d.states, vs.Current())
	}
	d.name = MakeFilename(KindManifest, vs.ManifestFileNum())
	d.path = testDir + "/" + d.name
	vs.Close()
	d.bytes = readFile(t, d.mem, d.path)
	r := wal.NewReader(bytes.NewReader(d.bytes), d.name)
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		d.starts = append(d.starts, r.Offset())
	}
	last := d.starts[len(d.starts)-1]
	d.frags = []int64{last}
	for b := (last/32768 + 1) * 32768; b < int64(len(d.bytes)); b += 32768 {
		d.frags = append(d.frags, b)
	}
	if len(d.starts) != n+1 || big != (len(d.frags) == 3) {
		t.Fatalf("test manifest: %d records, last in %d fragments", len(d.starts), len(d.frags))
	}
	return d
}

// recover runs Recover on the manifest replaced by b.
func (d *tailDB) recover(t *testing.T, b []byte) (*VersionSet, error) {
	fsys := d.mem.CrashClone()
	writeFile(t, fsys, d.path, b)
	return Recover(fsys, testDir)
}

// wantCorrupt checks that err is corruption of this manifest at offset at,
// reported by the wal framing, and not "no DB here".
func (d *tailDB) wantCorrupt(err error, at int64) error {
	var ce *wal.CorruptionError
	if !errors.Is(err, base.ErrCorruption) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), d.name) ||
		!errors.As(err, &ce) || ce.Offset != at {
		return fmt.Errorf("err = %v; want corruption of %s at offset %d", err, d.name, at)
	}
	return nil
}

// TestManifestTruncated cuts the manifest at every record boundary (it
// opens, holding that prefix of the edits) and at every byte offset inside
// the last record (a torn tail: that edit alone is dropped, and reported).
// A cut inside the snapshot leaves no edit: corruption. The three-block
// record is cut near its fragment edges and at a stride.
func TestManifestTruncated(t *testing.T) {
	for _, big := range []bool{false, true} {
		d := newTailDB(t, 4, big)
		for i, start := range append(slices.Clone(d.starts[1:]), int64(len(d.bytes))) {
			vs, err := d.recover(t, d.bytes[:start])
			if err != nil {
				t.Fatalf("big %v, cut at record boundary %d: %v", big, start, err)
			}
			assertVersion(t, vs, d.states[i])
			if vs.RecoveredDroppedBytes() != 0 {
				t.Fatalf("cut at record boundary %d: dropped %d", start, vs.RecoveredDroppedBytes())
			}
		}
		last := d.starts[len(d.starts)-1]
		for cut := last + 1; cut < int64(len(d.bytes)); cut++ {
			if big && cut%97 != 0 && !slices.ContainsFunc(d.frags, func(f int64) bool { return cut-f < 16 && f-cut < 16 }) {
				continue
			}
			vs, err := d.recover(t, d.bytes[:cut])
			if err != nil {
				t.Fatalf("big %v, cut at %d inside the last record (at %d): %v", big, cut, last, err)
			}
			assertVersion(t, vs, d.states[len(d.states)-2])
			// Zeros that end the file are not counted (wal.Reader.DroppedBytes).
			want := int64(len(bytes.TrimRight(d.bytes[:cut], "\x00"))) - last
			if got := vs.RecoveredDroppedBytes(); got != want {
				t.Fatalf("cut at %d: dropped %d, want %d", cut, got, want)
			}
		}
		for cut := int64(0); cut < d.starts[1]; cut++ {
			_, err := d.recover(t, d.bytes[:cut])
			if !errors.Is(err, base.ErrCorruption) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), d.name) {
				t.Fatalf("cut at %d inside the snapshot: %v, want corruption naming %s", cut, err, d.name)
			}
		}
	}
}

// TestManifestBitFlip flips every bit of every record, the last one
// included: always corruption at the damaged fragment, naming the
// manifest, never a silent drop. There is no exception to allow for: the
// checksum covers every byte of a fragment but itself, and a length raised
// past the end of the file is caught too. On the three-block record, every
// header bit and payload bits at a stride.
func TestManifestBitFlip(t *testing.T) {
	for _, big := range []bool{false, true} {
		d := newTailDB(t, 4, big)
		b := slices.Clone(d.bytes)
		// fragment returns the start of the fragment holding byte i.
		fragment := func(i int64) int64 {
			at := int64(0)
			for _, s := range append(slices.Clone(d.starts), d.frags...) {
				if s <= i {
					at = max(at, s)
				}
			}
			return at
		}
		for i := range int64(len(b)) {
			f := fragment(i)
			if big && i-f >= 7 && i%61 != 0 {
				continue
			}
			for bit := range 8 {
				b[i] ^= 1 << bit
				_, err := d.recover(t, b)
				if err := d.wantCorrupt(err, f); err != nil {
					t.Fatalf("big %v, flip bit %d of byte %d: %v", big, bit, i, err)
				}
				b[i] ^= 1 << bit
			}
		}
	}
}

// TestManifestTails names the tails that are not a cut-short last record.
func TestManifestTails(t *testing.T) {
	d := newTailDB(t, 3, false)
	size := int64(len(d.bytes))
	last := d.starts[len(d.starts)-1]
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	t.Run("zeros after the last record: torn, nothing lost", func(t *testing.T) {
		vs, err := d.recover(t, cat(d.bytes, make([]byte, 40000)))
		if err != nil {
			t.Fatal(err)
		}
		assertVersion(t, vs, d.states[len(d.states)-1])
		if vs.RecoveredDroppedBytes() != 0 { // zeros held no record
			t.Fatalf("dropped %d", vs.RecoveredDroppedBytes())
		}
	})
	t.Run("garbage after the last record: corruption", func(t *testing.T) {
		_, err := d.recover(t, cat(d.bytes, []byte("not a fragment")))
		if err := d.wantCorrupt(err, size); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("last record zeroed from its middle, file full length: corruption", func(t *testing.T) {
		b := slices.Clone(d.bytes)
		clear(b[last+10:])
		_, err := d.recover(t, b)
		if err := d.wantCorrupt(err, last); err != nil {
			t.Fatal(err)
		}
	})
}
