package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/monbandb/monban/lsm"
)

// treeWideLesson shows the tree-wide filter (lsm.Options.FilterScope =
// TreeWide) on a DB of its own in dir, shaped as the lesson DB's tables:
// the even keys k000…k998 compacted into the last level, every tenth key
// overwritten in an older L0 table, the odd keys k005, k015, … in a newer
// one. A lookup asks the memtable's filter, then the tree-wide filter
// once; each table of a level it does not name is passed without its Bloom
// filter, and a level it names asks the table's Bloom filter as before.
func treeWideLesson(dir string) (string, error) {
	o := teachOptions(nil)
	o.FilterScope = lsm.TreeWide
	db, err := lsm.Open(dir, o)
	if err != nil {
		return "", err
	}
	t := &teacher{db: db}
	for i := 0; i < 1000; i += 2 {
		t.put(i, "v1")
	}
	t.check(db.Compact())
	for i := 0; i < 1000; i += 10 {
		t.put(i, "v2")
	}
	t.check(db.Flush())
	for i := 5; i < 1000; i += 10 {
		t.put(i, "v3")
	}
	t.check(db.Flush())
	// Open builds the filter in the background; until it is ready a read
	// asks the tables' own filters. This DB filed every table as it wrote
	// it, so the filter holds them all once Open's build is in.
	for deadline := time.Now().Add(time.Minute); db.Stats().TreeFilterEntries < 700; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.check(errors.New("teach: the tree-wide filter was never built"))
			break
		}
	}
	var b strings.Builder
	b.WriteString(t.tree(nil))
	before := db.Stats()
	for _, k := range []string{"k301", "k302", "k305"} {
		b.WriteString(t.explain(k))
	}
	after := db.Stats()
	fmt.Fprintf(&b, "tree-wide filter: %d entries, asked %d times, named no level %d times,\n%d cache lines read (Stats.TreeFilterEntries, TreeFilterProbes,\nTreeFilterNegatives, TreeFilterLines)\n",
		after.TreeFilterEntries, after.TreeFilterProbes-before.TreeFilterProbes,
		after.TreeFilterNegatives-before.TreeFilterNegatives, after.TreeFilterLines-before.TreeFilterLines)
	return b.String(), errors.Join(t.err, db.Close())
}
