package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestOpenChecksEveryTablesIdentity: Open refuses a live table that is not
// the one the manifest names — truncated, another table's file of the
// same size, a damaged tail — whether or not the table cache can hold
// every table: with MaxOpenFiles 1 the victim (the second L6 table) is not
// among the tables Open keeps open, and Open must still check it.
func TestOpenChecksEveryTablesIdentity(t *testing.T) {
	base := vfs.NewMem()
	full := buildDamageDB(t, base, nil, "new")
	victim, _ := pickVictim(t, base, full)
	cases := []struct {
		name   string
		damage func(t *testing.T, fs vfs.FS)
	}{
		{"truncated", func(t *testing.T, fs vfs.FS) {
			data := readFile(t, fs, "/db/"+victim)
			rewrite(t, fs, "/db/"+victim, data[:len(data)-1])
		}},
		{"same_size_other_id", func(t *testing.T, fs vfs.FS) {
			id := tableProps(t, fs, "/db/"+victim).TableID ^ 1
			rewrite(t, fs, "/db/"+victim, rewriteTable(t, fs, "/db/"+victim, id, tableProps(t, fs, "/db/"+victim).DBID))
		}},
		{"bit_flip_in_footer", func(t *testing.T, fs vfs.FS) {
			data := readFile(t, fs, "/db/"+victim)
			data[len(data)-20] ^= 0x01
			rewrite(t, fs, "/db/"+victim, data)
		}},
	}
	for _, c := range cases {
		for _, maxOpen := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/MaxOpenFiles=%d", c.name, maxOpen), func(t *testing.T) {
				fs := copyDB(t, base)
				c.damage(t, fs)
				before := dirFiles(t, fs, "/db")
				opts := damageOpts(fs)
				opts.MaxOpenFiles = maxOpen
				d, err := Open("/db", opts)
				if err == nil {
					d.Close()
					t.Fatalf("Open succeeded; want it to refuse %s", victim)
				}
				refused(t, err, true, victim)
				unchanged(t, fs, before)
			})
		}
	}
}
