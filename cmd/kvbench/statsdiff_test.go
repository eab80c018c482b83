package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/monbandb/monban/lsm"
)

// gauges are the fields of lsm.Stats and lsm.LevelStats that say what is
// now, not what happened: statsDiff keeps the later value.
var gauges = map[string]bool{
	"Files": true, "Bytes": true, "Target": true, "Score": true, "RangeDels": true, "RangeDelBytes": true,
	"FilterBytes": true, "FilterEntries": true, "FilterBitsPerKey": true, "TheoryFPR": true, "RangeFilterBytes": true,
	"ExpectedFalsePositives": true, "TreeFilterBytes": true, "TreeFilterEntries": true, "MemtablesQueued": true,
	"CompactionsRunning": true, "CompactionDebt": true, "OffHeapMapped": true, "OffHeapLeaked": true,
	"MetaPinnedBytes": true, "MetaPagedTables": true, "MetaPagedFilterTables": true, "BackgroundError": true,
}

// TestStatsDiffSubtractsEveryCounter: a workload's window (statsDiff)
// holds what happened during it, for every counter Stats has, the ones
// added after statsDiff was written included; a counter it missed printed
// its total since Open as the workload's.
func TestStatsDiffSubtractsEveryCounter(t *testing.T) {
	var a, b lsm.Stats
	fill(reflect.ValueOf(&a).Elem(), 1)
	fill(reflect.ValueOf(&b).Elem(), 3)
	check(t, "Stats", reflect.ValueOf(statsDiff(a, b)), "")
}

// fill sets every number in v to n.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float64:
		v.SetFloat(float64(n))
	}
}

// check reports a number in d, the diff of fields filled with 1 and 3,
// that is not 2 (a counter) or 3 (a gauge, named field).
func check(t *testing.T, path string, d reflect.Value, field string) {
	t.Helper()
	want := 2.0
	if gauges[field] {
		want = 3
	}
	var got float64
	switch d.Kind() {
	case reflect.Struct:
		if d.Type() == reflect.TypeOf(time.Duration(0)) {
			break
		}
		for i := range d.NumField() {
			f := d.Type().Field(i)
			check(t, path+"."+f.Name, d.Field(i), f.Name)
		}
		return
	case reflect.Array:
		for i := range d.Len() {
			check(t, path, d.Index(i), field)
		}
		return
	case reflect.Int, reflect.Int64:
		got = float64(d.Int())
	case reflect.Uint64:
		got = float64(d.Uint())
	case reflect.Float64:
		got = d.Float()
	default:
		return
	}
	if got != want {
		t.Errorf("%s: %v after statsDiff of 1 and 3, want %v", path, got, want)
	}
}
