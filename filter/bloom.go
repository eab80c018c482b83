package filter

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Sentinel errors of the filter package. filter imports nothing of the
// project, so it has its own corruption sentinel; callers that own the bytes
// (sstable) wrap it in base.ErrCorruption with the file and offset.
var (
	// ErrInvalidParameter is returned when a filter is asked for an
	// impossible size: n ≤ 0, p outside (0, 1), or more bits than fit in
	// memory.
	ErrInvalidParameter = errors.New("filter: invalid parameter")
	// ErrCorrupt is returned when encoded filter bytes are truncated,
	// foreign, of an unknown version, or inconsistent with their trailer.
	ErrCorrupt = errors.New("filter: corrupt encoding")
)

// maxBloomBits bounds NewBloom's allocation: 2^36 bits is 8 GiB, and on a
// 32-bit platform an int's range is the bound (256 MiB).
const maxBloomBits = min(1<<36, math.MaxInt)

// Bloom is the standard Bloom filter: m bits, and k probes per key spread
// over all of them by double hashing. It is the teaching reference and the
// measure the cache-line filter is compared with; SSTables use CacheLine.
//
// Add must not run concurrently with anything; MayContain may run from many
// goroutines once the adds are done.
type Bloom struct {
	words []uint64
	m     uint64 // bits; len(words) = ceil(m/64)
	k     int
	added int
}

// NewBloom returns a filter that holds n keys with a false-positive rate of
// about p, sized as
//
//	m = ⌈-n·ln p / (ln 2)²⌉,  k = round(m/n · ln 2)
//
// (about 4.8 bits per key per factor of ten in p; k ≈ 0.69 bits per key).
// Errors wrap ErrInvalidParameter.
func NewBloom(n int, p float64) (*Bloom, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: NewBloom n = %d, want > 0", ErrInvalidParameter, n)
	}
	if !(p > 0 && p < 1) { // also rejects NaN
		return nil, fmt.Errorf("%w: NewBloom p = %v, want 0 < p < 1", ErrInvalidParameter, p)
	}
	m := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if m > maxBloomBits {
		return nil, fmt.Errorf("%w: NewBloom(%d, %v) needs %.0f bits, limit %d", ErrInvalidParameter, n, p, m, maxBloomBits)
	}
	return newBloomBits(uint64(m), StandardHashes(m/float64(n))), nil
}

// newBloomBits returns a filter of m bits (at least 1) and k ≥ 1 probes;
// the measurements use it to compare layouts at equal bits per key.
func newBloomBits(m uint64, k int) *Bloom {
	m = max(m, 1)
	return &Bloom{words: make([]uint64, (m+63)/64), m: m, k: k}
}

// Add adds key. Adding a key twice sets no new bits but counts twice in
// Added.
func (f *Bloom) Add(key []byte) { f.AddHash(Hash(key)) }

// AddHash adds a key by its Hash.
func (f *Bloom) AddHash(h uint64) {
	f.added++
	a, b := doubleHash(h)
	for i := 0; i < f.k; i++ {
		pos, _ := bits.Mul64(a, f.m)
		f.words[pos>>6] |= 1 << (pos & 63)
		a += b
	}
}

// MayContain reports whether key may have been added: false is certain,
// because added bits are never cleared.
func (f *Bloom) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key's Hash; it allocates nothing.
func (f *Bloom) MayContainHash(h uint64) bool {
	a, b := doubleHash(h)
	for i := 0; i < f.k; i++ {
		pos, _ := bits.Mul64(a, f.m)
		if f.words[pos>>6]&(1<<(pos&63)) == 0 {
			return false
		}
		a += b
	}
	return true
}

// doubleHash splits one 64-bit hash into the start and step of the probe
// sequence g_i = a + i·b (Kirsch and Mitzenmacher: two hashes make k probes
// as good as k independent ones). The seed does g_i mod m on 32-bit halves;
// here g_i runs over 64 bits and multiply-shift maps it onto [0, m), because
// a 64-bit division per probe costs more than the rest of the probe. b is
// the hash rotated by half a word and made odd, so it never sticks at 0.
func doubleHash(h uint64) (a, b uint64) {
	return h, bits.RotateLeft64(h, 32) | 1
}

// Bits is m, the number of bits.
func (f *Bloom) Bits() uint64 { return f.m }

// Hashes is k, the number of probes per key.
func (f *Bloom) Hashes() int { return f.k }

// Added is the number of Add calls.
func (f *Bloom) Added() int { return f.added }

// FillRatio is the fraction of the m bits that are set. A filter filled
// with its design n is about half full.
func (f *Bloom) FillRatio() float64 {
	on := 0
	for _, w := range f.words {
		on += bits.OnesCount64(w)
	}
	return float64(on) / float64(f.m)
}

// EstimatedFPR is FillRatio()^k: the chance that all k probes of an absent
// key hit set bits. It needs no key count, so it exposes a filter filled past
// its design n, which otherwise degrades silently.
func (f *Bloom) EstimatedFPR() float64 {
	return math.Pow(f.FillRatio(), float64(f.k))
}
