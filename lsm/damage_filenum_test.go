package lsm

import (
	"fmt"
	"maps"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestAStrayOfTheLargestNumberIsNotMonbans drops an empty file named with
// the largest 64-bit number into a DB. Read as monban's, its number made
// the next one wrap to 0: Open's new WAL took the number of the one it had
// just replayed and deleted it with the replayed logs, and Repair's
// rebuild truncated live files. It is some other program's file: Open and
// Repair leave it be, and every synced write stays. One of the largest
// number monban's names allow takes its name only, not every number below
// it (a black-box attack).
func TestAStrayOfTheLargestNumberIsNotMonbans(t *testing.T) {
	for _, stray := range []string{"18446744073709551615.sst", "18446744073709551614.log", "MANIFEST-18446744073709551615",
		// At the top of monban's range: their numbers carried the next
		// one past it, and the DB, or the one Repair made, wrote files
		// whose names are not monban's and would not open again.
		"281474976710655.sst", "281474976710655.log", "MANIFEST-281474976710655", "lost/281474976710655.sst"} {
		for _, repair := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/repair=%v", stray, repair), func(t *testing.T) {
				fs := vfs.NewMem()
				want := buildDamageDB(t, fs, nil, "a")
				if err := fs.MkdirAll("/db/lost"); err != nil {
					t.Fatal(err)
				}
				f, err := fs.Create("/db/" + stray)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				if repair {
					repairedTo(t, fs, want)
				}
				d, err := Open("/db", damageOpts(fs))
				if err != nil {
					t.Fatal(err)
				}
				for i := range 100 {
					k := fmt.Sprintf("after%03d", i)
					if err := d.Put([]byte(k), []byte("v"), Sync); err != nil {
						t.Fatal(err)
					}
					want[k] = "v"
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				d, err = Open("/db", damageOpts(fs))
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if got := dbContents(t, d); !maps.Equal(got, want) {
					t.Fatalf("after reopening:\n%s", diffModels(got, want))
				}
			})
		}
	}
}
