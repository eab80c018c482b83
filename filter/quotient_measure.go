package filter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// QuotientRow is one line of the quotient filter's measured table: a filter
// filled to Load with distinct keys, then probed with absent keys.
type QuotientRow struct {
	Load         float64 // load factor reached: Keys/2^QBits
	QBits, RBits uint
	Keys         int     // distinct keys inserted
	Probes       int     // absent keys looked up
	FalsePos     int     // probes answered "maybe"
	FPR          float64 // FalsePos/Probes
	TheoryFPR    float64 // 1-(1-2^-(QBits+RBits))^Keys ≈ Load·2^-RBits
	RunScan      float64 // remainders compared per absent-key lookup (0 if the quotient is unoccupied)
	ClusterSpan  float64 // slots from the cluster start to the last slot compared, per absent-key lookup
	OccupiedFrac float64 // fraction of lookups whose quotient is occupied (≈ 1-exp(-Load))
}

// QuotientTheoryFPR is the false-positive rate of a quotient filter holding
// n distinct random fingerprints of width bits: an absent key's fingerprint
// matches one of them with probability 1-(1-2^-width)^n.
func QuotientTheoryFPR(n int, width uint) float64 {
	return -math.Expm1(float64(n) * math.Log1p(-math.Ldexp(1, -int(width))))
}

// MeasureQuotient fills one filter of 2^qbits slots and rbits remainder bits
// to each load in loads (in increasing order; keys are distinct 9-byte
// keys hashed with Hash), and after each step looks up probes absent keys.
// The same seed gives the same table. kvbench prints it; the test
// TestQuotientFPRTable bounds it.
func MeasureQuotient(qbits, rbits uint, loads []float64, probes int, seed uint64) ([]QuotientRow, error) {
	f, err := NewQuotient(qbits, rbits)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x51))
	var key [9]byte // key[0] = 0 for inserted keys, 1 for absent ones
	var rows []QuotientRow
	for _, load := range loads {
		if load < 0 || load > 1 {
			return nil, fmt.Errorf("MeasureQuotient: load %v outside [0, 1]", load)
		}
		target := int(math.Round(load * float64(f.Slots())))
		for f.Len() < target {
			key[0] = 0
			binary.LittleEndian.PutUint64(key[1:], rng.Uint64())
			if err := f.Insert(key[:]); err != nil {
				return nil, fmt.Errorf("MeasureQuotient: insert at load %.3f: %w", f.LoadFactor(), err)
			}
		}
		row := QuotientRow{Load: f.LoadFactor(), QBits: qbits, RBits: rbits, Keys: f.Len(), Probes: probes,
			TheoryFPR: QuotientTheoryFPR(f.Len(), qbits+rbits)}
		var scanned, span, occupied int
		key[0] = 1
		for range probes {
			binary.LittleEndian.PutUint64(key[1:], rng.Uint64())
			hit, c, s := f.probeCost(Hash(key[:]))
			if hit {
				row.FalsePos++
			}
			if s > 0 {
				occupied++
			}
			scanned += c
			span += s
		}
		if probes > 0 {
			row.FPR = float64(row.FalsePos) / float64(probes)
			row.RunScan = float64(scanned) / float64(probes)
			row.ClusterSpan = float64(span) / float64(probes)
			row.OccupiedFrac = float64(occupied) / float64(probes)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// probeCost is MayContainHash instrumented for MeasureQuotient: it also
// returns the remainders compared and the slots from the cluster start to
// the last slot compared (both 0 when the quotient is unoccupied).
func (f *Quotient) probeCost(h uint64) (hit bool, compared, span int) {
	fq, fr := f.split(h)
	if f.n == 0 || !f.bit(qfOcc, fq) {
		return false, 0, 0
	}
	cs, k := f.clusterStart(fq)
	i := f.selectFree(qfCont, cs, k)
	for {
		compared++
		r := f.rem(i)
		if r >= fr {
			hit = r == fr
			break
		}
		i = f.next(i)
		if !f.bit(qfCont, i) {
			i = f.prev(i)
			break
		}
	}
	return hit, compared, int(f.dist(cs, i)) + 1
}
