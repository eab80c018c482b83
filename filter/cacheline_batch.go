package filter

import "runtime"

// batchGroup is how many queries MayContainHashes starts before it waits on
// any: enough independent line loads to keep the core's outstanding-miss
// slots busy, few enough that the lines are still in L1 for the second pass.
// On 10^8 keys, batches of 128 took 26.7, 22.6, 21.0 and 20.4 ns per absent
// query in groups of 16, 32, 64 and 128 (medians of three runs).
const batchGroup = 64

// MayContainHashes sets maybe[i] = MayContainHash(hashes[i]) for every i; it
// panics if maybe is shorter than hashes. It allocates nothing.
//
// It is faster than a loop of MayContainHash on a filter larger than the
// caches, because the cache misses of a batch overlap. A first pass computes
// each query's line and reads the byte its first probe tests: loads that
// depend neither on one another nor on any branch, so the CPU issues them
// together. A second pass tests that byte and the other probes, in lines
// that have arrived meanwhile, without a branch per probe: a mispredicted
// early exit would discard the work queued behind it, and the lines are in
// L1 by then, so testing every probe is cheaper. (A loop of single queries
// gets its overlap only as far as branch prediction runs ahead, which is
// why MayContainHash exits early instead.) Go has no prefetch instruction:
// the first probe's read is the prefetch, and its byte is used, so no
// compiler can drop it.
func (f CacheLine) MayContainHashes(hashes []uint64, maybe []bool) {
	maybe = maybe[:len(hashes)]
	if f.lines == 0 {
		for i := range maybe {
			maybe[i] = f.probes == 0 // as MayContainHash: zero value "maybe", empty filter "no"
		}
		return
	}
	for len(hashes) > 0 {
		n := min(len(hashes), batchGroup)
		var first [batchGroup]byte // the byte holding each query's first probe
		for i, h := range hashes[:n] {
			bit := (h * remix) >> (64 - 9)
			first[i] = f.data[lineOffset(h, f.lines)+bit>>3]
		}
		for i, h := range hashes[:n] {
			off := lineOffset(h, f.lines)
			line := f.data[off : off+lineBytes : off+lineBytes]
			x := h * remix
			r := first[i] >> (x >> (64 - 9) & 7)
			for range f.probes - 1 {
				x *= remix
				bit := x >> (64 - 9)
				r &= line[bit>>3] >> (bit & 7)
			}
			maybe[i] = r&1 != 0
		}
		hashes, maybe = hashes[n:], maybe[n:]
	}
	runtime.KeepAlive(f.keep)
}
