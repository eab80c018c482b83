//go:build race

package sstable

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// the allocation budgets, which rely on the block-buffer pools, are checked
// only without it; with it, freed block buffers are poisoned
// (internal/cache, invariant 6), which the lifetime tests rely on.
const raceEnabled = true
