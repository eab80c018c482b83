//go:build race

package offheap

// invariants keeps freed memory mapped but inaccessible (invariant 3).
// Race builds run it, since that is how the tests are run.
const invariants = true
