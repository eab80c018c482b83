//go:build !race

package cache

// invariants: see invariants_on.go.
const invariants = false
