package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/vfs"
)

func openMem(t testing.TB, fs vfs.FS, o *Options) *DB {
	t.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.FS = fs
	d, err := Open("/db", &opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return d
}

func mustGet(t testing.TB, d interface{ Get([]byte) ([]byte, error) }, key, want string) {
	t.Helper()
	v, err := d.Get([]byte(key))
	switch {
	case want == "" && !errors.Is(err, ErrNotFound):
		t.Fatalf("Get(%q) = %q, %v; want ErrNotFound", key, v, err)
	case want != "" && (err != nil || string(v) != want):
		t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, want)
	}
}

func TestBasicReadWriteFlushReopen(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{MemtableSize: 4 << 10})
	for i := range 1000 {
		if err := d.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i += 3 {
		if err := d.Delete(fmt.Appendf(nil, "k%04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(d *DB) {
		t.Helper()
		for i := range 1000 {
			want := fmt.Sprintf("v%d", i)
			if i%3 == 0 {
				want = ""
			}
			mustGet(t, d, fmt.Sprintf("k%04d", i), want)
		}
		it := d.NewIter(nil)
		n := 0
		for k, v := range it.All() {
			if !bytes.HasPrefix(k, []byte("k")) || len(v) == 0 {
				t.Fatalf("bad entry %q=%q", k, v)
			}
			n++
		}
		if err := it.Close(); err != nil || n != 666 {
			t.Fatalf("iterated %d keys (err %v), want 666", n, err)
		}
	}
	check(d)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check(d)
	if st := d.Stats(); st.Total.Files == 0 || st.MemtablesQueued != 0 {
		t.Fatalf("after Flush: %d tables, %d memtables queued", st.Total.Files, st.MemtablesQueued)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	check(d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKeySizes: the empty key and keys and values of a megabyte work
// through the memtable, a flush and a reopen; oversized ones are refused
// whole, before anything is written.
func TestKeySizes(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	big := bytes.Repeat([]byte("k"), 1<<20)
	bigVal := bytes.Repeat([]byte("v"), 1<<20)
	for _, kv := range [][2][]byte{{nil, []byte("empty key")}, {big, bigVal}, {[]byte("a"), nil}} {
		if err := d.Put(kv[0], kv[1]); err != nil {
			t.Fatalf("Put(%d-byte key, %d-byte value): %v", len(kv[0]), len(kv[1]), err)
		}
	}
	var b Batch
	b.Put([]byte("ok"), []byte("v"))
	b.Put(make([]byte, MaxKeySize+1), nil)
	if err := d.Write(&b); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("oversized key: %v, want ErrInvalidKey", err)
	}
	if err := d.Put([]byte("x"), make([]byte, MaxValueSize+1)); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("oversized value: %v, want ErrInvalidValue", err)
	}
	check := func() {
		t.Helper()
		mustGet(t, d, "", "empty key")
		mustGet(t, d, "ok", "")
		if v, err := d.Get(big); err != nil || !bytes.Equal(v, bigVal) {
			t.Fatalf("1 MiB key: %d bytes, %v", len(v), err)
		}
		if v, err := d.Get([]byte("a")); err != nil || len(v) != 0 {
			t.Fatalf("empty value: %q, %v", v, err)
		}
	}
	check()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check()
	d.Close()
	d = openMem(t, fs, nil)
	defer d.Close()
	check()
	if _, err := d.Get(nil); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := d.Get([]byte("a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if err := d.Put([]byte("a"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	if err := d.Delete([]byte("a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Delete after Close: %v, want ErrClosed", err)
	}
	if err := d.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v, want ErrClosed", err)
	}
	if err := d.Compact(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Compact after Close: %v, want ErrClosed", err)
	}
	if it := d.NewIter(nil); it.First() || !errors.Is(it.Close(), ErrClosed) {
		t.Fatal("iterator over a closed DB")
	}
	if _, err := d.Explain([]byte("a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Explain after Close: %v, want ErrClosed", err)
	}
	if st := d.Stats(); st.Total.Files != 0 {
		t.Fatalf("Stats after Close: %d files", st.Total.Files)
	}
	if err := d.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
}

// TestSecondOpenIsLocked: a directory has one DB at a time.
func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	d.Close()
	d, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d.Close()
}

// walFile returns the path and contents of the DB's only WAL.
func walFile(t *testing.T, fs vfs.FS) (string, []byte) {
	t.Helper()
	names, _ := fs.List("/db")
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			f, err := fs.Open("/db/" + n)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			return "/db/" + n, data
		}
	}
	t.Fatal("no WAL")
	return "", nil
}

func rewrite(t *testing.T, fs vfs.FS, path string, data []byte) {
	t.Helper()
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestRecoveryTornTailAndCorruption: a WAL cut mid-record (what a crash
// leaves) opens with the complete records and a log line; a WAL damaged
// before its tail fails Open with ErrCorruption naming the file.
func TestRecoveryTornTailAndCorruption(t *testing.T) {
	for _, tc := range []string{"torn", "corrupt"} {
		t.Run(tc, func(t *testing.T) {
			fs := vfs.NewMem()
			d := openMem(t, fs, &Options{MemtableSize: 1 << 20})
			for i := range 100 {
				d.Put(fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{'v'}, 100))
			}
			// Close syncs the WAL; the memtable is not flushed.
			d.Close()
			path, data := walFile(t, fs)
			var logBuf bytes.Buffer
			opts := &Options{FS: fs, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
			switch tc {
			case "torn":
				rewrite(t, fs, path, data[:len(data)-50])
				d, err := Open("/db", opts)
				if err != nil {
					t.Fatalf("Open after a torn tail: %v", err)
				}
				defer d.Close()
				mustGet(t, d, "k098", strings.Repeat("v", 100))
				mustGet(t, d, "k099", "")
				if logged := strings.Split(strings.TrimSpace(logBuf.String()), "\n"); len(logged) != 1 || !strings.Contains(logged[0], "torn tail") {
					t.Fatalf("log lines %q, want one about the torn tail", logged)
				}
			case "corrupt":
				data[len(data)/2] ^= 0x40
				rewrite(t, fs, path, data)
				// Small memtables: the replay writes tables before it meets the
				// damage, and the refused Open must take them away again.
				opts.MemtableSize = 4 << 10
				before := dirBytes(t, fs, "/db")
				_, err := Open("/db", opts)
				if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), path[len("/db/"):]) {
					t.Fatalf("Open of a WAL damaged mid-file: %v; want ErrCorruption naming %s", err, path)
				}
				if after := dirBytes(t, fs, "/db"); !maps.EqualFunc(before, after, bytes.Equal) {
					t.Fatalf("the refused Open changed the directory: %d files before, %d after", len(before), len(after))
				}
			}
		})
	}
}

// TestL0ThresholdDefaultsFollowTheOneSet: setting one L0 threshold alone,
// below or above the other's default, leaves valid options.
func TestL0ThresholdDefaultsFollowTheOneSet(t *testing.T) {
	for _, tc := range []struct{ o, want Options }{
		{Options{}, Options{L0SlowdownWritesThreshold: 20, L0StopWritesThreshold: 36}},
		{Options{L0StopWritesThreshold: 8}, Options{L0SlowdownWritesThreshold: 8, L0StopWritesThreshold: 8}},
		{Options{L0SlowdownWritesThreshold: 40}, Options{L0SlowdownWritesThreshold: 40, L0StopWritesThreshold: 40}},
		{Options{L0SlowdownWritesThreshold: 6}, Options{L0SlowdownWritesThreshold: 6, L0StopWritesThreshold: 36}},
	} {
		o := tc.o.withDefaults()
		if o.L0SlowdownWritesThreshold != tc.want.L0SlowdownWritesThreshold || o.L0StopWritesThreshold != tc.want.L0StopWritesThreshold {
			t.Errorf("%+v: slowdown %d stop %d, want %d %d", tc.o, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold,
				tc.want.L0SlowdownWritesThreshold, tc.want.L0StopWritesThreshold)
		}
		tc.o.FS = vfs.NewMem()
		d, err := Open("/db", &tc.o)
		if err != nil {
			t.Fatalf("Open with %+v: %v", tc.o, err)
		}
		d.Close()
	}
	// The property: any one threshold set alone, at any value, keeps its
	// value and leaves the three in order.
	for n := 1; n <= 60; n++ {
		for i, o := range []Options{{L0CompactionThreshold: n}, {L0SlowdownWritesThreshold: n}, {L0StopWritesThreshold: n}} {
			r := o.withDefaults()
			set := []int{r.L0CompactionThreshold, r.L0SlowdownWritesThreshold, r.L0StopWritesThreshold}
			if set[i] != n || r.validate() != nil {
				t.Fatalf("%+v alone: thresholds %v (%v)", o, set, r.validate())
			}
		}
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, o := range []Options{
		{MemtableSize: -1},
		{LevelMultiplier: 1},
		{BloomBitsPerKey: 65},
		{L0CompactionThreshold: 10, L0StopWritesThreshold: 5},
		{Split: &filter.Split{Len: func(k []byte) int { return len(k) }}},
		{Split: &filter.Split{Name: "nolen"}},
	} {
		o.FS = vfs.NewMem()
		if d, err := Open("/db", &o); !errors.Is(err, ErrInvalidOptions) {
			if d != nil {
				d.Close()
			}
			t.Errorf("Open with %+v: %v, want ErrInvalidOptions", o, err)
		}
	}
}
