package lsm

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// gateFS holds the second open of one file (the first is Open's identity
// check, the second the background load's) until release is closed,
// telling the test through held that the load has reached it; and counts
// every file's opens.
type gateFS struct {
	vfs.FS
	name    string
	held    chan struct{}
	release chan struct{}
	mu      atomic.Pointer[map[string]int]
	opens   map[string]*atomic.Int32
}

func newGateFS(fs vfs.FS, name string, tables []TableInfo) *gateFS {
	g := &gateFS{FS: fs, name: name, held: make(chan struct{}), release: make(chan struct{}), opens: map[string]*atomic.Int32{}}
	for _, ti := range tables {
		g.opens[fmt.Sprintf("%06d.sst", ti.FileNum)] = new(atomic.Int32)
	}
	return g
}

func (g *gateFS) Open(name string) (vfs.File, error) {
	for n, c := range g.opens {
		if strings.HasSuffix(name, "/"+n) && c.Add(1) == 2 && n == g.name {
			close(g.held)
			<-g.release
		}
	}
	return g.FS.Open(name)
}

// tablesOf lists the tables of the DB in fs, opened and closed on a copy.
func tablesOf(t *testing.T, fs vfs.FS) []TableInfo {
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
	return tables
}

// TestReadsWhileLoading holds Open's background load at the first L6
// table, after the L0 tables and before the other L6 tables, and reads
// meanwhile: Gets of keys in tables loaded and not loaded yet give the
// model's answers, and deletes of keys that only a table not loaded yet
// holds are not elided (its filter is unknown: "maybe", never "absent"),
// so they read back as deleted. Once the load goes on, every key reads
// back as the model says.
func TestReadsWhileLoading(t *testing.T) {
	base := vfs.NewMem()
	want := buildDamageDB(t, base, nil, "new")
	tables := tablesOf(t, base)
	var l6 []TableInfo
	for _, ti := range tables {
		if ti.Level == NumLevels-1 {
			l6 = append(l6, ti)
		}
	}
	held, last := l6[0], l6[len(l6)-1]
	g := newGateFS(copyDB(t, base), fmt.Sprintf("%06d.sst", held.FileNum), tables)
	d, err := Open("/db", damageOpts(g))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	<-g.held
	inHeld := func(k string) bool { return k >= string(held.Smallest) && k <= string(held.Largest) }

	// Keys whose only version is in the last L6 table, not loaded yet.
	var deleted []string
	for i := range damageKeys {
		k := damageKey(i)
		if k >= string(last.Smallest) && k <= string(last.Largest) && strings.HasPrefix(want[k], "new-v1") {
			deleted = append(deleted, k)
		}
	}
	if len(deleted) == 0 {
		t.Fatalf("no key of %06d [%s, %s] has its only version there", last.FileNum, last.Smallest, last.Largest)
	}
	elided := d.Stats().DeletesElided
	for _, k := range deleted {
		if err := d.Delete([]byte(k)); err != nil {
			t.Fatal(err)
		}
		delete(want, k)
	}
	if n := d.Stats().DeletesElided - elided; n != 0 {
		t.Errorf("%d deletes of keys present in a table not loaded yet were elided", n)
	}

	heldGets := make(chan error, 1)
	go func() {
		// Waits for the held table, which the load is opening.
		for i := range damageKeys {
			if k := damageKey(i); inHeld(k) {
				v, err := d.Get([]byte(k))
				if w, ok := want[k]; ok && (err != nil || string(v) != w) || !ok && !errors.Is(err, ErrNotFound) {
					heldGets <- fmt.Errorf("Get(%s) = %q, %v; want %q (present %v)", k, v, err, w, ok)
					return
				}
			}
		}
		heldGets <- nil
	}()
	// The second L6 table is not loaded yet either, and some Gets need it.
	unloaded := g.opens[fmt.Sprintf("%06d.sst", l6[1].FileNum)]
	opened := unloaded.Load()
	for i := range damageKeys {
		k := damageKey(i)
		if inHeld(k) {
			continue
		}
		v, err := d.Get([]byte(k))
		if w, ok := want[k]; ok && (err != nil || string(v) != w) || !ok && !errors.Is(err, ErrNotFound) {
			t.Errorf("while loading: Get(%s) = %q, %v; want %q (present %v)", k, v, err, w, ok)
		}
	}
	select {
	case <-d.loaded:
		t.Fatal("the load ended while held")
	default:
	}
	if n := unloaded.Load(); n != opened+1 {
		t.Errorf("table %06d, not loaded yet, was opened %d times by the Gets; want once", l6[1].FileNum, n-opened)
	}
	close(g.release)
	if err := <-heldGets; err != nil {
		t.Error(err)
	}
	<-d.loaded
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Errorf("after the load:\n%s", diffModels(got, want))
	}
}

// TestCloseDuringBackgroundLoad: Close while the load is opening a table
// waits for that open and for the load to end (no table is opened after
// Close released the directory), and the load stops: the tables after the
// held one are opened once only, by Open's identity check. So does Close
// right after Open, wherever the load is. Run under -race; a use after
// Close shows there.
func TestCloseDuringBackgroundLoad(t *testing.T) {
	base := vfs.NewMem()
	buildDamageDB(t, base, nil, "new")
	tables := tablesOf(t, base)
	held := tables[len(tables)/2]
	g := newGateFS(copyDB(t, base), fmt.Sprintf("%06d.sst", held.FileNum), tables)
	d, err := Open("/db", damageOpts(g))
	if err != nil {
		t.Fatal(err)
	}
	<-g.held
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the load was opening a table", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(g.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	loadEnded(t, d)
	for _, ti := range tables[len(tables)/2+1:] {
		if n := g.opens[fmt.Sprintf("%06d.sst", ti.FileNum)].Load(); n != 1 {
			t.Errorf("table %06d after the held one opened %d times; want once (the identity check)", ti.FileNum, n)
		}
	}

	// And Close at once after Open, every time at another point of the load.
	for range 20 {
		d, err := Open("/db", damageOpts(g.FS))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		loadEnded(t, d)
	}
}

// loadEnded fails unless d's background load has ended: Close waits for it.
func loadEnded(t *testing.T, d *DB) {
	t.Helper()
	select {
	case <-d.loaded:
	default:
		t.Fatal("Close returned before the background load ended")
	}
}

// TestBackgroundLoadPinsWhatOpenPinned: under a PinnedMetaLimit that pins
// some tables and pages others, the background load leaves every table
// pinned or paged as loading them all in Open did: each opened in level
// order, with the last level's low (sstable.MetaBudget), before any read.
func TestBackgroundLoadPinsWhatOpenPinned(t *testing.T) {
	fs := vfs.NewMem()
	buildDamageDB(t, fs, nil, "new")
	d, err := Open("/db", damageOpts(fs)) // replays the WAL into a table: none to replay below
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	tables := tablesOf(t, fs)
	var meta int64
	for _, ti := range tables {
		meta += ti.FilterBytes
	}
	// The filters' bytes: with the indexes, more than the tables hold, so
	// some pin, some page, and a last-level one pins its index alone.
	opts := damageOpts(fs)
	opts.PinnedMetaLimit = meta

	// What loading them in Open pinned, one Reader each, in level order.
	low := func(fileNum uint64) (bool, int) {
		n := 0
		isLow := false
		for _, ti := range tables {
			if ti.Level == NumLevels-1 {
				n++
				isLow = isLow || ti.FileNum == fileNum
			}
		}
		return isLow, n
	}
	budget := sstable.NewMetaBudget(opts.PinnedMetaLimit, low)
	c := cache.New(8 << 20)
	defer c.Close()
	want := map[uint64]string{}
	for _, ti := range tables {
		f, err := fs.Open(fmt.Sprintf("/db/%06d.sst", ti.FileNum))
		if err != nil {
			t.Fatal(err)
		}
		r, err := sstable.Open(f, sstable.ReaderOptions{Cache: c, FileNum: ti.FileNum, MetaBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		want[ti.FileNum] = pinning(r)
	}

	d, err = Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	<-d.loaded
	got := map[uint64]string{}
	kinds := map[string]int{}
	for _, ti := range tables {
		r, release, ok := d.tables.Peek(ti.FileNum)
		if !ok {
			t.Fatalf("table %06d not loaded", ti.FileNum)
		}
		got[ti.FileNum] = pinning(r)
		kinds[got[ti.FileNum]]++
		release()
	}
	if !maps.Equal(got, want) {
		t.Errorf("after the background load:\n%v\nloading in Open:\n%v", got, want)
	}
	if kinds["pinned"] == 0 || kinds["paged"] == 0 || kinds["filter paged"] == 0 {
		t.Fatalf("tables %v: want some of each", kinds)
	}
}

// pinning says what r holds of its index and filter.
func pinning(r *sstable.Reader) string {
	switch {
	case r.Paged():
		return "paged"
	case r.FilterPaged():
		return "filter paged"
	}
	return "pinned"
}
