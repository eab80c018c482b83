// Package base defines what every layer of monban agrees on: the internal
// key (a user key tagged with a sequence number and a kind), its ordering,
// and the corruption sentinel that every decoder of on-disk bytes wraps.
//
// # Format
//
// An encoded internal key is the user key followed by an 8-byte
// little-endian trailer, trailer = seq<<8 | kind (docs/format.md, "Internal
// key"). Invariants:
//
//  1. Sequence numbers fit in 56 bits; 0 is never assigned to a write.
//  2. Internal keys sort by user key ascending (bytewise), then by trailer
//     descending, so the newest version of a user key comes first.
//  3. Seeking to SeekKey(k, s) lands on the newest version of k whose
//     sequence number is at most s: the seek trailer's kind byte is 0xff,
//     above every real kind.
package base
