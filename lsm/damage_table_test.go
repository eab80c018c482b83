package lsm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// tableDamage is one way of damaging the victim table (and, for some, the
// partner table) of a copy of the DB.
type tableDamage struct {
	name   string
	damage func(t *testing.T, fs vfs.FS, victim, partner string)
	// setAside: Repair must put the victim into lost/ (it does not
	// verify). keepsAll: every record of every table is intact, so Repair
	// must bring back every key. reported: the damage is in a part Repair
	// need not read, and its report names it on the merged victim.
	// salvaged: the damage is in data blocks, and Repair merges the
	// victim's other blocks.
	setAside, keepsAll, reported, salvaged bool
	// fate, if set, is what the report must call the victim.
	fate Fate
}

// TestDamagedTable damages a table the manifest names — an L6 table that
// holds the newest version of some keys — eight ways, with every table
// loaded at Open (the default MaxOpenFiles) and with one (MaxOpenFiles 1:
// the victim is opened by the first read that needs it). Either Open
// refuses with ErrCorruption naming the table and deletes nothing, or it
// opens and every Get of the key space gives the model's answer or an
// error wrapping ErrCorruption naming the table, and at least one Get
// gives that error: never ErrNotFound or another value for a key whose
// newest version the victim held. Then Repair brings back what the
// surviving tables and the WAL hold.
func TestDamagedTable(t *testing.T) {
	base := vfs.NewMem()
	full := buildDamageDB(t, base, nil, "new")
	older := vfs.NewMem() // an earlier incarnation: same file numbers, other contents
	buildDamageDB(t, older, nil, "old")

	victim, partner := pickVictim(t, base, full)
	t.Logf("victim %s, partner %s", victim, partner)

	exchange := func(t *testing.T, fs vfs.FS, a, b string) {
		da, db := readFile(t, fs, "/db/"+a), readFile(t, fs, "/db/"+b)
		rewrite(t, fs, "/db/"+a, db)
		rewrite(t, fs, "/db/"+b, da)
	}
	cases := []tableDamage{
		{name: "deleted", damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			if err := fs.Remove("/db/" + v); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "truncated", setAside: true, fate: FateDamaged, damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			data := readFile(t, fs, "/db/"+v)
			rewrite(t, fs, "/db/"+v, data[:len(data)/2])
		}},
		{name: "bit_flip_in_data_block", setAside: true, salvaged: true, damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			data := readFile(t, fs, "/db/"+v)
			data[5] ^= 0x10 // inside the first data block, which starts at 0
			rewrite(t, fs, "/db/"+v, data)
		}},
		// Only the filter, which the merge has no use for: Repair reads
		// the records past it and keeps every key.
		{name: "bit_flip_in_filter", keepsAll: true, reported: true, damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			data := readFile(t, fs, "/db/"+v)
			p := tableProps(t, fs, "/db/"+v)
			if p.FilterBytes == 0 {
				t.Fatalf("%s has no filter", v)
			}
			data[p.DataBytes+p.FilterBytes/2] ^= 0x10 // the filter block follows the data blocks
			rewrite(t, fs, "/db/"+v, data)
			f, err := fs.Open("/db/" + v)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sstable.Open(f, sstable.ReaderOptions{}); err == nil || !strings.Contains(err.Error(), "filter block") {
				t.Fatalf("the flipped table opens with %v, want its filter block's damage", err)
			}
		}},
		{name: "swapped", keepsAll: true, damage: func(t *testing.T, fs vfs.FS, v, p string) {
			exchange(t, fs, v, p)
		}},
		{name: "replaced_by_another_table", damage: func(t *testing.T, fs vfs.FS, v, p string) {
			rewrite(t, fs, "/db/"+v, readFile(t, fs, "/db/"+p))
		}},
		{name: "older_incarnation", setAside: true, damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			rewrite(t, fs, "/db/"+v, readFile(t, older, "/db/"+v))
		}},
		// The older incarnation's entries under an id of the same length
		// as the victim's: the file has the size the manifest records, so
		// only the identity check can tell (at Open when the table is
		// loaded there, at the first Get that needs it otherwise).
		{name: "older_incarnation_same_size", setAside: true, damage: func(t *testing.T, fs vfs.FS, v, _ string) {
			props := tableProps(t, fs, "/db/"+v)
			data := rewriteTable(t, older, "/db/"+v, props.TableID^1, props.DBID)
			if want := len(readFile(t, fs, "/db/"+v)); len(data) != want {
				t.Fatalf("rewritten older table: %d bytes, want %d", len(data), want)
			}
			rewrite(t, fs, "/db/"+v, data)
		}},
	}
	for _, tc := range cases {
		for _, maxOpen := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/MaxOpenFiles=%d", tc.name, maxOpen), func(t *testing.T) {
				fs := copyDB(t, base)
				tc.damage(t, fs, victim, partner)
				names := []string{victim}
				if tc.name == "swapped" {
					names = append(names, partner)
				}
				checkDamagedTableReads(t, fs, maxOpen, full, names)

				var want model
				switch tables := filesOf(t, fs, "/db", manifest.KindTable); {
				case tc.keepsAll:
					want = full
				case tc.salvaged:
					want = survivorsModel(t, fs, tables, full)
				default:
					want = survivorsModel(t, fs, slices.DeleteFunc(tables, func(n string) bool { return n == victim }), full)
				}
				rep := repairedTo(t, fs, want)
				if lost, _ := fs.List("/db/lost"); tc.setAside && !slices.Contains(lost, victim) {
					t.Errorf("lost/ holds %v, want %s set aside\n%v", lost, victim, rep)
				}
				if i := slices.IndexFunc(rep.Files, func(f RepairedFile) bool { return f.Name == victim }); tc.fate != 0 && (i < 0 || rep.Files[i].Fate != tc.fate) {
					t.Errorf("the report on %s: want %v\n%v", victim, tc.fate, rep)
				}
				if tc.reported {
					i := slices.IndexFunc(rep.Files, func(f RepairedFile) bool { return f.Name == victim })
					if i < 0 || rep.Files[i].Fate != FateMerged || !errors.Is(rep.Files[i].Err, ErrCorruption) {
						t.Errorf("the report on %s: want it merged, its damage named\n%v", victim, rep)
					}
				}
			})
		}
	}
}

// pickVictim returns the second L6 table, which holds the newest version
// of one of its first four keys, and the L6 table after it.
func pickVictim(t *testing.T, fs vfs.FS, full model) (victim, partner string) {
	t.Helper()
	d, err := Open("/db", damageOpts(copyDB(t, fs)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var l6 []TableInfo
	for _, ti := range tables {
		if ti.Level == NumLevels-1 {
			l6 = append(l6, ti)
		}
	}
	if len(l6) < 3 {
		t.Fatalf("%d L6 tables, want 3 or more", len(l6))
	}
	// Its first data block (about 8 entries of 60 bytes) must hold a key
	// no later write overwrote, so that the bit flip there hides a newest
	// version.
	v := l6[1]
	var s int
	fmt.Sscanf(string(v.Smallest), "k%d", &s)
	if !slices.ContainsFunc([]int{s, s + 1, s + 2, s + 3}, func(i int) bool { return strings.HasPrefix(full[damageKey(i)], "new-v1") }) {
		t.Fatalf("L6 table %06d starts at %s, whose newest version is elsewhere", v.FileNum, v.Smallest)
	}
	return manifest.MakeFilename(manifest.KindTable, v.FileNum), manifest.MakeFilename(manifest.KindTable, l6[2].FileNum)
}

// checkDamagedTableReads opens the damaged DB with MaxOpenFiles maxOpen
// (0: the default) and checks that it refuses, or that no Get of the key
// space gives a wrong answer and some Get reports the damage. Either way
// the table files are left as they were, for Repair to judge.
func checkDamagedTableReads(t *testing.T, fs vfs.FS, maxOpen int, full model, names []string) {
	t.Helper()
	before := dirFiles(t, fs, "/db")
	opts := damageOpts(fs)
	opts.MaxOpenFiles = maxOpen
	d, err := Open("/db", opts)
	if err != nil {
		t.Logf("Open: %v", err)
		refused(t, err, false, names...)
		unchanged(t, fs, before)
		return
	}
	var wrong []string
	reported := 0
	for i := range damageKeys {
		k := damageKey(i)
		v, err := d.Get([]byte(k))
		want, ok := full[k]
		switch {
		case err == nil && ok && string(v) == want, !ok && errors.Is(err, ErrNotFound):
		case errors.Is(err, ErrCorruption) && containsAny(err.Error(), names):
			reported++
		default:
			wrong = append(wrong, fmt.Sprintf("Get(%s) = %q, %v; want %q (present %v) or ErrCorruption naming %v", k, v, err, want, ok, names))
		}
	}
	if err := d.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	t.Logf("Open succeeded; %d Gets reported the damage, %d wrong", reported, len(wrong))
	if len(wrong) > 0 {
		t.Errorf("%d wrong answers:\n%s", len(wrong), strings.Join(wrong[:min(len(wrong), 5)], "\n"))
	}
	if reported == 0 {
		t.Errorf("no Get reported the damage to %v", names)
	}
	after := dirFiles(t, fs, "/db")
	for n, data := range before {
		if strings.HasSuffix(n, ".sst") && after[n] != data {
			t.Errorf("%s was removed or changed by the DB (%d bytes, was %d)", n, len(after[n]), len(data))
		}
	}
}

// tableProps returns the properties of the table at path.
func tableProps(t *testing.T, fs vfs.FS, path string) *sstable.Properties {
	t.Helper()
	r := openTableFile(t, fs, path)
	defer r.Close()
	return r.Properties()
}

// rewriteTable returns the bytes of the table at path written again, with
// damageOpts' block size and filter, under table id id and DB id dbID.
func rewriteTable(t *testing.T, fs vfs.FS, path string, id, dbID uint64) []byte {
	t.Helper()
	r := openTableFile(t, fs, path)
	defer r.Close()
	scratch := vfs.NewMem()
	out, err := scratch.Create("/t.sst")
	if err != nil {
		t.Fatal(err)
	}
	o := damageOpts(nil).withDefaults()
	w := sstable.NewWriter(out, sstable.WriterOptions{BlockSize: o.BlockSize, BloomBitsPerKey: float64(o.bloomBits()), TableID: id, DBID: dbID})
	it := r.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.Add(it.Key(), it.Value()); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, scratch, "/t.sst")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
