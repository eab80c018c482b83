package filter

// A Split cuts a user key into its prefix and the rest, so that a filter
// can hold prefixes beside whole keys and answer "may a key with this
// prefix be here?" for an iterator bounded to one prefix (Pebble's
// Comparer.Split, RocksDB's prefix extractor). The prefix of key is
// key[:Len(key)].
//
// A function cannot be recorded in a file, so a Split has a Name: a table
// records the Name of the Split its filter was built with (property
// filter.prefix_split, docs/format.md), and a table built with another
// Name, or with none, is never asked about a prefix (it answers "maybe").
// A Name therefore stands for one function forever: change the function,
// change the Name.
//
// Contract:
//
//  1. Len is deterministic and returns 0 <= Len(key) <= len(key). This is
//     all the filters rely on: a filter holds key[:Len(key)] for every key
//     it holds, and never says no to a prefix it holds, whatever Len does
//     otherwise.
//  2. Len is monotone in the key order (bytes.Compare of user keys):
//     a <= b implies a[:Len(a)] <= b[:Len(b)]. Then the keys with one
//     prefix are contiguous (a < b < c with a and c of prefix P gives
//     P <= b[:Len(b)] <= P), which is what lets an iterator bounded to a
//     prefix seek to it and stop at the first key with another.
//  3. Ask only about prefixes Len makes. A prefix filter answers about
//     the keys k with k[:Len(k)] equal to the prefix asked, not about the
//     keys that merely start with those bytes: with Len cutting "abc1" at
//     3, asking for "ab" may rightly say no although "abc1" starts with
//     it. A Len with Len(p) = len(p) for each prefix p it makes (a prefix
//     is its own prefix, as in Pebble's MVCC keys "key@version") lets a
//     caller pass a prefix wherever a key is expected.
//
// A nil *Split means no prefix filtering.
type Split struct {
	// Name identifies Len; it must not be empty.
	Name string
	// Len returns the length of key's prefix.
	Len func(key []byte) int
}

// Prefix returns key[:s.Len(key)], aliasing key.
func (s *Split) Prefix(key []byte) []byte { return key[:s.Len(key)] }

// HasName reports whether s is a Split named name (not empty): whether a
// filter built with the Split of that name answers for s.
func (s *Split) HasName(name string) bool { return s != nil && name != "" && s.Name == name }

// PrefixHash is the hash a filter holds for a prefix (the memtables'
// quotient filters and the tables' cache-line filters alike): Hash(prefix)
// put through a fixed bijection of 64-bit values, so that a prefix and a
// whole key of the same bytes are different entries. Were they one entry,
// a table holding "abc" under the prefix "ab" would answer "maybe" to a
// Get of the absent key "ab": no wrong answer, but a whole-key false
// positive on exactly the keys an application is likely to ask for. A
// bijection of the hash costs three multiplies and shifts, where a marker
// byte or a seeded xxhash would hash a copy of the prefix or go through
// the streaming API. Prefix and key collide only where the bijection has a
// fixed point, as rare as any two keys' hashes colliding.
func PrefixHash(prefix []byte) uint64 { return prefixMix(Hash(prefix)) }

// prefixMix is MurmurHash3's 64-bit finalizer (fmix64) of h xor a seed.
// Its output shares no structure with h that the filters use: the
// cache-line filter takes a line from the top bits and probes by
// multiplying by remix, the quotient filter splits the bits into quotient
// and remainder, and a finalizer carries every input bit into all of
// them, so a prefix's entry is placed independently of its bytes' entry as
// a key. The seed moves fmix64's one obvious fixed point, fmix64(0) = 0.
func prefixMix(h uint64) uint64 {
	h ^= 0x7072656669783a3a // "prefix::"
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
