// Package filter holds monban's approximate-membership filters. Each answers
// "may this key be in the set?": "no" is certain, "maybe" is wrong with a
// small, measured probability (the false-positive rate, FPR). A "no" lets
// the read path skip a table's index and data blocks, and lets the engine
// prove a key absent (docs/design.md, "The filters and their three jobs").
//
// Four filters, all probing from the one 64-bit Hash of a key:
//
//   - Bloom: the standard Bloom filter, m bits and k probes spread over all
//     of them by double hashing, sized from (n, p). The teaching reference
//     and the yardstick for the others; it has no encoding.
//   - CacheLine (built by CacheLineBuilder): the SSTable filter block. The
//     hash picks one 64-byte line and every probe falls inside it, so a
//     query costs one cache miss instead of k, and a batch of queries
//     (MayContainHashes) overlaps its misses. It pays for this with a
//     slightly higher FPR at equal bits per key (0.96% against 0.82% at 10
//     bits per key): CacheLineFPR computes it, README.md has the measured
//     table.
//   - Quotient: the mutable level's filter, which can also delete, merge and
//     grow; see its type documentation.
//   - Maplet (experimental, issue 29; not used by the engine yet): a
//     quotient filter whose slots also hold a run id (an L0 table or a
//     level), so one probe answers which runs of a whole tree may hold a
//     key. Run ids are a prefix code chosen by RunCodeLengths, short for
//     the big runs, and the fingerprint takes the rest of the slot.
//
// theory.go has the FPR formulas and measure.go the measurements that the
// tests bound and `kvbench filters` prints.
//
// A Split (split.go) names a function that cuts keys into prefixes; a
// table's and a memtable's filter built with one also hold their keys'
// prefixes, each under its PrefixHash, which no key's Hash equals, so an
// iterator bounded to an absent prefix can skip them (README.md,
// "Prefixes").
//
// Grafite (grafite.go) is a range filter over 64-bit points: "may the
// set hold a value in [lo, hi]?". Keys become points by GrafitePoint,
// their first 8 bytes big-endian, so it separates only keys that differ
// there (big-endian integers, timestamps). At B bits per key its
// false-positive rate is at most ℓ/2^(B−2) for a range of ℓ ≤ L points,
// L the range length it was built for (README.md, "Ranges").
//
// A key-hash set (keyhashes.go) is not a filter but what one is rebuilt
// from: the top KeyHashBits bits of the Hash of each of a table's keys,
// sorted, deduplicated and stored in an Elias–Fano sequence, about
// 2 + log2(2^40/m) bits for each of m keys (AppendKeyHashes,
// DecodeKeyHashes). A table carries one so that Open can build the
// tree-wide Maplet without reading data blocks.
//
// AllocateBitsPerKey sizes many cache-line filters together: given the key
// counts of the runs an absent-key lookup probes (L0 tables, levels), it
// spreads a memory budget so that the sum of their FPRs is least (Monkey:
// small runs get more bits per key, the last level fewer).
// ExpectedFalsePositives reports that sum for any sizing.
//
// # Lifetime and concurrency
//
// A Bloom or CacheLineBuilder is owned by one goroutine while keys are added;
// once adds stop, a Bloom may be queried concurrently. A CacheLine is a small
// value over bytes it does not own: it aliases the slice given to
// OpenCacheLine, which must stay unchanged while the CacheLine is used, and
// may be queried from many goroutines. So with a GrafiteBuilder and the
// Grafite that OpenGrafite returns over its bytes. A Quotient or a Maplet
// takes one writer or many readers; a Maplet's table lies outside the Go
// heap, and its owner calls Release when done with it.
//
// # Invariants
//
//  1. No false negatives: a key added to a filter is reported "maybe" by that
//     filter forever after (bits are only ever set).
//  2. The zero CacheLine, the stand-in for a filter that failed to decode,
//     answers "maybe" to every key.
//  3. Decoding never panics, and never allocates by a length read from the
//     bytes: OpenCacheLine checks that the trailer's line count matches the
//     slice length exactly, so a query cannot index outside it. Bad bytes give
//     an error wrapping ErrCorrupt.
//  4. A query allocates nothing.
//  5. An encoding carries its layout tag and version; any change to the bytes,
//     the hash, or the probe sequence gets a new version.
//  6. Grafite has no false negatives for values added and for keys added
//     with AddKey and asked with MayContainKeys: GrafitePoint is monotone,
//     so GrafiteBounds(a, b) holds the point of every key in [a, b); a
//     range longer than grafiteMaxPieces blocks, and every range asked of
//     the zero Grafite, answers "maybe"; a filter of no values answers
//     "no" to every range.
//  7. OpenGrafite checks that every section of the encoding has the
//     length its header implies and that the Elias–Fano high part and its
//     samples are consistent, so a query of a filter it returned never
//     reads outside the bytes, whatever they held.
//  8. A Maplet never leaves out a run of an entry it stores (no false
//     negatives), as long as callers Remove and Move only entries they
//     Inserted; its slot payloads always start with a codeword of its run
//     code, every codeword leaving at least one fingerprint bit, which
//     UnmarshalBinary checks on decoded bytes as it checks a Quotient's.
//  9. DecodeKeyHashes accepts exactly the bytes AppendKeyHashes writes:
//     a set has one encoding, and anything else is ErrCorrupt.
//
// # Format
//
// A cache-line filter (docs/format.md, "Cache-line Bloom filter") is
//
//	[line 0: 64 bytes] … [line L-1: 64 bytes] [L: u32 LE] [k: u8] [version 1: u8] ["CL"]
//
// A key with hash h lives in line ⌊h·L/2^64⌋. Its probes are x_i = h·C^i
// (mod 2^64) for i = 1..k, C = 0x9e3779b97f4a7c15, each setting bit x_i>>55
// of the line (byte bit/8, bit bit%8, least significant first). L = 0 is a
// filter of no keys, which answers "no".
package filter
