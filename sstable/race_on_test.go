//go:build race

package sstable

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation budgets that rely on the pool get one allocation of slack.
const raceEnabled = true
