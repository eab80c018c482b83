//go:build !race

package offheap

const invariants = false
