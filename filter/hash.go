package filter

import "github.com/cespare/xxhash/v2"

// Hash is the one 64-bit hash monban computes per user key. Every filter
// (Bloom, cache-line Bloom, quotient) derives all of its probes from it, so
// the read path hashes a key once and hands the hash to each filter on its
// way down.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }
