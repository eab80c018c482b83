package manifest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// newRNG returns a seeded generator and logs the seed on failure, so a
// failing run can be replayed by hard-coding the seed.
func newRNG(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, 0))
}

func ikey(s string, seq base.SeqNum) base.InternalKey {
	return base.MakeInternalKey([]byte(s), seq, base.KindSet)
}

// tableFor makes metadata for table num covering user keys lo..hi.
func tableFor(num uint64, lo, hi string, seq base.SeqNum) *FileMetadata {
	return &FileMetadata{
		FileNum: num, Size: 1000 + num, Smallest: ikey(lo, seq), Largest: ikey(hi, seq),
		SmallestSeq: seq, LargestSeq: seq, NumEntries: 10, NumDeletions: 3,
		TableID: num*0x9e3779b97f4a7c15 | 1,
	}
}

// randKey returns a random user key, sometimes empty, sometimes long.
func randKey(rng *rand.Rand) []byte {
	switch rng.IntN(20) {
	case 0:
		return nil
	case 1:
		return bytes.Repeat([]byte{byte(rng.IntN(256))}, 300+rng.IntN(300))
	}
	k := make([]byte, 1+rng.IntN(12))
	for i := range k {
		k[i] = byte(rng.IntN(256))
	}
	return k
}

func randIKey(rng *rand.Rand) base.InternalKey {
	return base.MakeInternalKey(randKey(rng), base.SeqNum(rng.Uint64N(uint64(base.MaxSeqNum)+1)), base.Kind(rng.IntN(2)))
}

// randEdit returns a structurally valid edit with random content: every
// field that Decode accepts, at its extremes now and then.
func randEdit(rng *rand.Rand) *VersionEdit {
	e := &VersionEdit{}
	big := func() uint64 {
		if rng.IntN(4) == 0 {
			return rng.Uint64()
		}
		return rng.Uint64N(1000)
	}
	if rng.IntN(4) == 0 {
		e.FormatVersion = formatVersion
	}
	e.LogNum = big()
	e.NextFileNum = big()
	e.LastSeq = base.SeqNum(rng.Uint64N(uint64(base.MaxSeqNum) + 1))
	for range rng.IntN(3) {
		e.FormerDBIDs = append(e.FormerDBIDs, FormerDBID{ID: rng.Uint64() | 1, Shared: base.SeqNum(rng.Uint64N(uint64(base.MaxSeqNum) + 1))})
	}
	e.FormerDBIDs = mergeFormers(nil, e.FormerDBIDs)
	for range rng.IntN(3) {
		e.CompactPointers = append(e.CompactPointers, CompactPointer{Level: rng.IntN(NumLevels), Key: randIKey(rng)})
	}
	for range rng.IntN(5) {
		if e.Deleted == nil {
			e.Deleted = map[DeletedFile]bool{}
		}
		e.Deleted[DeletedFile{Level: rng.IntN(NumLevels), FileNum: big()}] = true
	}
	for range rng.IntN(5) {
		a, b := randIKey(rng), randIKey(rng)
		if base.Compare(a, b) > 0 {
			a, b = b, a
		}
		s1, s2 := base.SeqNum(rng.Uint64N(uint64(base.MaxSeqNum)+1)), base.SeqNum(rng.Uint64N(uint64(base.MaxSeqNum)+1))
		n := big()
		var id uint64 // 0 half the time: a table recorded before table ids (tag 7)
		if rng.IntN(2) == 0 {
			id = rng.Uint64() | 1
		}
		e.Added = append(e.Added, NewFile{Level: rng.IntN(NumLevels), Meta: &FileMetadata{
			FileNum: big() + 1, Size: big(), Smallest: a, Largest: b,
			SmallestSeq: min(s1, s2), LargestSeq: max(s1, s2), NumEntries: n, NumDeletions: n / 2,
			TableID: id,
		}})
	}
	if rng.IntN(2) == 0 {
		e.DBID = rng.Uint64() | 1
	}
	return e
}

// editsEqual compares two edits field by field (keys by bytes, so a nil
// and an empty user key are equal).
func editsEqual(a, b *VersionEdit) error {
	if a.FormatVersion != b.FormatVersion || a.LogNum != b.LogNum || a.NextFileNum != b.NextFileNum || a.LastSeq != b.LastSeq || a.DBID != b.DBID {
		return fmt.Errorf("scalars differ: %+v vs %+v", *a, *b)
	}
	if !slices.Equal(a.FormerDBIDs, b.FormerDBIDs) {
		return fmt.Errorf("former DB ids %x vs %x", a.FormerDBIDs, b.FormerDBIDs)
	}
	if len(a.CompactPointers) != len(b.CompactPointers) {
		return fmt.Errorf("%d compact pointers vs %d", len(a.CompactPointers), len(b.CompactPointers))
	}
	for i := range a.CompactPointers {
		x, y := a.CompactPointers[i], b.CompactPointers[i]
		if x.Level != y.Level || !keysEqual(x.Key, y.Key) {
			return fmt.Errorf("compact pointer %d: %v vs %v", i, x, y)
		}
	}
	if len(a.Deleted) != len(b.Deleted) {
		return fmt.Errorf("%d deleted vs %d", len(a.Deleted), len(b.Deleted))
	}
	for d := range a.Deleted {
		if !b.Deleted[d] {
			return fmt.Errorf("deleted %v missing", d)
		}
	}
	if len(a.Added) != len(b.Added) {
		return fmt.Errorf("%d added vs %d", len(a.Added), len(b.Added))
	}
	for i := range a.Added {
		if a.Added[i].Level != b.Added[i].Level {
			return fmt.Errorf("added %d: level %d vs %d", i, a.Added[i].Level, b.Added[i].Level)
		}
		if err := metaEqual(a.Added[i].Meta, b.Added[i].Meta); err != nil {
			return fmt.Errorf("added %d: %v", i, err)
		}
	}
	return nil
}

func keysEqual(a, b base.InternalKey) bool {
	return bytes.Equal(a.UserKey, b.UserKey) && a.Trailer == b.Trailer
}

func metaEqual(a, b *FileMetadata) error {
	if a.FileNum != b.FileNum || a.Size != b.Size || !keysEqual(a.Smallest, b.Smallest) || !keysEqual(a.Largest, b.Largest) ||
		a.SmallestSeq != b.SmallestSeq || a.LargestSeq != b.LargestSeq || a.NumEntries != b.NumEntries || a.NumDeletions != b.NumDeletions ||
		a.TableID != b.TableID {
		return fmt.Errorf("metadata %v vs %v", a, b)
	}
	return nil
}

// versionsEqual compares the persisted content of two Versions.
func versionsEqual(a, b *Version) error {
	for level := range a.Levels {
		x, y := a.Levels[level], b.Levels[level]
		if len(x) != len(y) {
			return fmt.Errorf("L%d: %d tables vs %d\n%v\nvs\n%v", level, len(x), len(y), a, b)
		}
		for i := range x {
			if err := metaEqual(x[i], y[i]); err != nil {
				return fmt.Errorf("L%d[%d]: %v", level, i, err)
			}
		}
	}
	return nil
}

// setWithOneTable returns a new version set in memory whose current
// Version holds one L0 table, and the table's number.
func setWithOneTable(t *testing.T) (*VersionSet, uint64) {
	t.Helper()
	vs, err := Create(vfs.NewMem(), testDir)
	if err != nil {
		t.Fatal(err)
	}
	num := vs.NextFileNum()
	if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: tableFor(num, "a", "b", 1)}}}); err != nil {
		t.Fatal(err)
	}
	return vs, num
}
