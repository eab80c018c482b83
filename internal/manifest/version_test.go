package manifest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// randLevelVersion builds a Version whose L0 has random overlapping tables
// and whose L1..L6 have random disjoint ones, over a small key alphabet so
// that probes hit boundaries often.
func randLevelVersion(t *testing.T, rng *rand.Rand) *Version {
	key := func(i int) string { return fmt.Sprintf("%03d", i) }
	e := &VersionEdit{}
	num := uint64(1)
	for range rng.IntN(6) {
		a, b := rng.IntN(100), rng.IntN(100)
		e.Added = append(e.Added, NewFile{Level: 0, Meta: tableFor(num, key(min(a, b)), key(max(a, b)), base.SeqNum(rng.IntN(50)))})
		num++
	}
	for level := 1; level < NumLevels; level++ {
		// Cut points over 0..99: a table per pair of consecutive points,
		// skipping some so that gaps exist.
		cuts := []int{}
		for k := 0; k < 100; k++ {
			if rng.IntN(8) == 0 {
				cuts = append(cuts, k)
			}
		}
		for i := 0; i+1 < len(cuts); i += 1 + rng.IntN(2) {
			lo, hi := cuts[i], cuts[i+1]-1
			if lo > hi {
				continue
			}
			e.Added = append(e.Added, NewFile{Level: level, Meta: tableFor(num, key(lo), key(hi), 1)})
			num++
		}
	}
	b := newBuilder(&Version{})
	if err := b.apply(e); err != nil {
		t.Fatal(err)
	}
	v, err := b.build()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOverlapsAndFindFileModel compares Overlaps and FindFile with brute
// force over every level.
func TestOverlapsAndFindFileModel(t *testing.T) {
	rng := newRNG(t)
	for round := range 200 {
		v := randLevelVersion(t, rng)
		for range 50 {
			lo, hi := fmt.Sprintf("%03d", rng.IntN(105)), fmt.Sprintf("%03d", rng.IntN(105))
			if lo > hi {
				lo, hi = hi, lo
			}
			if rng.IntN(4) == 0 {
				hi += "x" // between keys
			}
			for level := range NumLevels {
				var want []*FileMetadata
				for _, f := range v.Levels[level] {
					if string(f.Largest.UserKey) >= lo && string(f.Smallest.UserKey) <= hi {
						want = append(want, f)
					}
				}
				got := v.Overlaps(level, []byte(lo), []byte(hi))
				if !slices.Equal(got, want) {
					t.Fatalf("round %d: L%d Overlaps(%s, %s) = %v, want %v", round, level, lo, hi, got, want)
				}
				var wantF *FileMetadata
				for _, f := range v.Levels[level] {
					if string(f.Smallest.UserKey) <= lo && lo <= string(f.Largest.UserKey) {
						wantF = f
						break
					}
				}
				if got := v.FindFile(level, []byte(lo)); got != wantF {
					t.Fatalf("round %d: L%d FindFile(%s) = %v, want %v", round, level, lo, got, wantF)
				}
			}
		}
	}
}

func TestBuilderRejects(t *testing.T) {
	base0 := &Version{}
	b := newBuilder(base0)
	if err := b.apply(&VersionEdit{Added: []NewFile{{Level: 1, Meta: tableFor(1, "a", "c", 1)}}}); err != nil {
		t.Fatal(err)
	}
	v, err := b.build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    *VersionEdit
	}{
		{"overlap in L1", &VersionEdit{Added: []NewFile{{Level: 1, Meta: tableFor(2, "c", "d", 1)}}}},
		{"duplicate number", &VersionEdit{Added: []NewFile{{Level: 2, Meta: tableFor(1, "x", "y", 1)}}}},
		{"delete absent", &VersionEdit{Deleted: map[DeletedFile]bool{{Level: 1, FileNum: 9}: true}}},
		{"delete wrong level", &VersionEdit{Deleted: map[DeletedFile]bool{{Level: 2, FileNum: 1}: true}}},
		{"level out of range", &VersionEdit{Added: []NewFile{{Level: NumLevels, Meta: tableFor(3, "x", "y", 1)}}}},
		{"inverted range", &VersionEdit{Added: []NewFile{{Level: 2, Meta: tableFor(3, "y", "x", 1)}}}},
	} {
		b := newBuilder(v)
		err := b.apply(tc.e)
		if err == nil {
			_, err = b.build()
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A move (delete and re-add in one edit) is fine and keeps L1's slice
	// untouched for the levels it does not change.
	b = newBuilder(v)
	if err := b.apply(&VersionEdit{
		Deleted: map[DeletedFile]bool{{Level: 1, FileNum: 1}: true},
		Added:   []NewFile{{Level: 2, Meta: v.Levels[1][0]}},
	}); err != nil {
		t.Fatal(err)
	}
	moved, err := b.build()
	if err != nil || len(moved.Levels[1]) != 0 || len(moved.Levels[2]) != 1 {
		t.Fatalf("move: %v\n%v", err, moved)
	}
}

func TestL0Order(t *testing.T) {
	b := newBuilder(&Version{})
	e := &VersionEdit{}
	for i, seq := range []base.SeqNum{5, 9, 1, 9} {
		e.Added = append(e.Added, NewFile{Level: 0, Meta: tableFor(uint64(i+1), "a", "z", seq)})
	}
	if err := b.apply(e); err != nil {
		t.Fatal(err)
	}
	v, err := b.build()
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, f := range v.Levels[0] {
		got = append(got, f.FileNum)
	}
	if want := []uint64{4, 2, 1, 3}; !slices.Equal(got, want) {
		t.Fatalf("L0 order %v, want %v (LargestSeq desc, then FileNum desc)", got, want)
	}
	if f := v.FindFile(0, []byte("m")); f.FileNum != 4 {
		t.Fatalf("FindFile L0 = %v, want the newest table", f)
	}
}

func TestUnrefBelowZeroPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	(&Version{}).Unref()
}

func TestFindFileAllocs(t *testing.T) {
	rng := newRNG(t)
	v := randLevelVersion(t, rng)
	k := []byte("050")
	if n := testing.AllocsPerRun(100, func() {
		for level := 1; level < NumLevels; level++ {
			_ = v.FindFile(level, k)
			_ = v.Overlaps(level, k, k)
		}
	}); n != 0 {
		t.Fatalf("FindFile/Overlaps on L1+ allocate %v times", n)
	}
}
