//go:build race

package lsm

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// the allocation budgets, which rely on the block-buffer and iterator
// pools, are checked only without it.
const raceEnabled = true
