package lsm

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/monbandb/monban/vfs"
)

// fillBig sets every unsigned and signed integer under v to a big DB's
// magnitude: 12 digits for a field named for bytes, 9 for the rest.
func fillBig(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				if strings.Contains(v.Type().Field(i).Name, "Bytes") && f.CanUint() {
					f.SetUint(999_999_999_999)
					continue
				}
				fillBig(f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			fillBig(v.Index(i))
		}
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(999_999_999)
	case reflect.Int, reflect.Int64:
		if v.Type().String() != "time.Duration" {
			v.SetInt(999_999_999)
		}
	}
}

// TestStatsStringWidth: every line of Stats.String fits in 80 columns and
// ends in no space, for a small DB's counters and for counters of a big
// one (every count 9 digits, every byte count 12).
func TestStatsStringWidth(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	d.Compact()
	d.Get([]byte("k050x"))
	d.NewIter(&IterOptions{Prefix: []byte("k0")}).Close()
	small := d.Stats()

	big := small
	fillBig(reflect.ValueOf(&big).Elem())
	big.BackgroundError = errors.New("monban: flush: write 000042.sst: no space left on device")
	for name, s := range map[string]Stats{"small": small, "big": big} {
		out := s.String()
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 80 || strings.TrimRight(l, " ") != l {
				t.Errorf("%s: a line of %d columns (at most 80) or ending in a space: %q", name, n, l)
			}
		}
		if testing.Verbose() {
			t.Logf("%s:\n%s", name, out)
		}
	}
}

// TestStatsStringTreeFilter: the tree-wide filter's figures are printed
// when it is on, and its line is absent when it is not.
func TestStatsStringTreeFilter(t *testing.T) {
	for _, scope := range []FilterScope{PerTable, TreeWide} {
		d := openMem(t, vfs.NewMem(), &Options{FilterScope: scope})
		for i := range 100 {
			d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
		}
		if err := d.Compact(); err != nil {
			t.Fatal(err)
		}
		if d.tree != nil {
			// The filter is built in the background: until a build ends
			// there is nothing to print (Stats.TreeFilterBytes 0), which
			// failed this test about one run in twenty.
			d.waitIdle()
			d.tree.builds.Wait()
		}
		d.Get([]byte("k050x"))
		out := d.Stats().String()
		d.Close()
		if has := strings.Contains(out, "tree filter:"); has != (scope == TreeWide) {
			t.Errorf("FilterScope %v: a tree filter line %v in\n%s", scope, has, out)
		}
	}
}
