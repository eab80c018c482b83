package lsm

import "sync/atomic"

// proofGate decides whether a Delete asks the filters to prove its key
// absent (provablyAbsent). The proof pays off only when it succeeds: a
// delete of a key that exists asks one table filter or more in vain, and
// in a DB whose filters outgrow the CPU caches that probe is a cache miss,
// a fifth of such a delete's CPU (kvbench deleterandom against
// -keep_absent_deletes). RocksDB removed its filter_deletes for that cost.
// So the gate keeps a credit: a proof that succeeds adds proofWinCredit
// (up to proofMaxCredit), one that fails takes one away, and while no
// credit is left only every proofSampleEvery-th delete asks, to notice
// when deletes of absent keys come back. The proof stays on as long as
// about one in proofWinCredit+1 succeeds.
//
// The credit is kept as a debt, so that the zero gate, a new DB's, proves
// every delete until proofs fail.
//
// Skipping a proof only writes a tombstone, which is always correct: the
// gate trades elisions for speed, never answers. It is a heuristic shared
// by concurrent deletes, and its updates may race; a lost update moves the
// credit by one.
type proofGate struct {
	debt    atomic.Int64  // proofMaxCredit minus the credit
	skipped atomic.Uint64 // deletes that did not ask; every proofSampleEvery-th is sampled
}

const (
	proofWinCredit   = 16
	proofMaxCredit   = 1024
	proofSampleEvery = 16
)

// skippedProofs is how many deletes did not ask: every one that found the
// gate closed, less the one in proofSampleEvery of them that asked.
func (g *proofGate) skippedProofs() uint64 {
	n := g.skipped.Load()
	return n - n/proofSampleEvery
}

// ask reports whether this delete should try the proof.
func (g *proofGate) ask() bool {
	if g.debt.Load() < proofMaxCredit {
		return true
	}
	return g.skipped.Add(1)%proofSampleEvery == 0
}

// record counts the outcome of a proof that was tried.
func (g *proofGate) record(proved bool) {
	switch d := g.debt.Load(); {
	case proved && d > 0:
		g.debt.Add(-min(d, proofWinCredit))
	case !proved && d < proofMaxCredit:
		g.debt.Add(1)
	}
}
