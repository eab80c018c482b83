package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/monbandb/monban/filter"
)

// An empty range costs a data block only where a table's range filter
// errs, and every table ignoring its filter costs one; a range of written
// keys yields all of them, filters or not (checkScans). The range
// filters' memory is reported with filters on and off, and their bound
// only with them on. tiny sets -range_size 40: ten runs of 40 of the 400
// keys.
func TestRangeFigures(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillrandom,rangemissing,rangerandom", "-cache_size", "0")
	if rs, bits := num(lines[0], "range_size"), num(lines[0], "range_filter_bits"); rs != 40 || bits != 16 || lines[0]["big_endian_keys"] != true {
		t.Errorf("header range_size %v, range_filter_bits %v, big_endian_keys %v; want 40, the default 16, true", rs, bits, lines[0]["big_endian_keys"])
	}
	checkScans(t, lines, "range", "ranges", 40)
	for _, filters := range []bool{true, false} {
		rm := results(lines, "rangemissing", filters)[0]
		if num(rm, "reads", "range_filter_bytes") == 0 {
			t.Errorf("rangemissing (filters %v): no range filter memory reported", filters)
		}
		if _, ok := rm["reads"].(map[string]any)["ranges"].(map[string]any)["promised"]; ok != filters {
			t.Errorf("rangemissing (filters %v): promised given %v", filters, ok)
		}
	}
}

// A range workload's bounds ask the range filter for exactly the run's
// integers, none of the written run above a missing one: an upper bound
// of key(n+range_size), whose zero padding the filter cannot tell from a
// shorter key's, would ask for n+range_size too, and every fourth missing
// run would end on a multiple of 256, where even an 8-byte key would.
// The bounds hold exactly the run's keys.
func TestRangeBounds(t *testing.T) {
	c, err := parseConfig([]string{"-benchmarks", "fillrandom,rangemissing", "-num", "1000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k := c.keys()
	if c.rangeSize != 32 || c.rangeFilterBits != 16 || !k.bigEndian || k.group != 32 {
		t.Fatalf("range_size %d, range_filter_bits %d, keys %+v; want the defaults 32 and 16, big-endian runs of 32", c.rangeSize, c.rangeFilterBits, k)
	}
	b := &bench{cfg: c, keys: k}
	th := &thread{key: make([]byte, k.keySize)}
	for j := range k.runs() {
		for _, missing := range []bool{true, false} {
			n := k.numbers(missing)(j * int(k.group))
			o := b.rangeBounds(th, n)
			if lo, hi, ok := filter.GrafiteBounds(o.LowerBound, o.UpperBound); !ok || lo != n || hi != n+k.group-1 {
				t.Errorf("run at %d: filter asked [%d, %d], want [%d, %d]", n, lo, hi, n, n+k.group-1)
			}
			in := 0
			for i := range k.num {
				key := k.key(make([]byte, k.keySize), k.present(i))
				if bytes.Compare(key, o.LowerBound) >= 0 && bytes.Compare(key, o.UpperBound) < 0 {
					in++
				}
			}
			if want := map[bool]int{true: 0, false: k.inRun(j)}[missing]; in != want {
				t.Errorf("run at %d (missing %v) holds %d written keys, want %d", n, missing, in, want)
			}
		}
	}
	if c, err = parseConfig([]string{"-benchmarks", "fillrandom,deleterange"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if c.rangeSize != 1000 || c.rangeFilterBits != 0 || c.keys().bigEndian {
		t.Errorf("without range workloads: range_size %d, range_filter_bits %d, big-endian %v; want deleterange's 1000, none, decimal",
			c.rangeSize, c.rangeFilterBits, c.keys().bigEndian)
	}
}
