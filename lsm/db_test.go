package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/vfs"
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
