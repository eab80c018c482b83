// Package metamorphic tests the lsm engine by running one random sequence
// of operations against many configurations and comparing what every read
// returned. Options change how the engine stores data — memtable size,
// filters, block and file sizes, compression, the level shape, caches,
// sync — but never what a read returns, so any difference between two
// configurations is a bug in one of them. A map model referees: it says
// what each read must return.
//
// The package holds test code only (this file exists so the directory is a
// package); cockroachdb/pebble's internal/metamorphic is the model.
//
// # Operations
//
// The generator (ops_test.go) draws from a seed: puts, overwrites of live
// keys, deletes of live, once-live and never-written keys, DeleteRange
// between keys read or sought (now and then from the empty key, or to
// past every key), batches mixing all three, Gets of present and absent
// keys, MultiGets of up to 40 of them
// (in no order, with repeats) through the DB or a snapshot, iterators
// with random bounds moved by First, Last, SeekGE, SeekLT, Next and Prev,
// full scans in both directions, snapshots read long after they were
// taken, Flush, Compact, CompactRange, Checkpoint (opened read-only
// beside the DB and scanned whole) and Close+reopen (now and then through
// Repair, or into a Checkpoint taken with iterators and snapshots open,
// where the DB goes on with its old directory removed). The same seed
// gives the same sequence whatever its length, so a failure at operation
// i replays with any MONBAN_META_OPS above i.
//
// # Comparisons
//
// Each operation's outcome is a string: "ok" or the error for writes, the
// value or "not found" for Gets (a MultiGet's joined, key by key), "key=value", "invalid" or the error for
// iterator moves. Invariants:
//
//  1. Every configuration gives every operation the same outcome; the
//     first difference fails the test with the seed, the operation's index
//     and text, and both configurations' names and outcomes.
//  2. The configurations' common outcome of every read equals the model's.
//
// # Running
//
//	go test ./internal/metamorphic                         # CI: one seed, short
//	MONBAN_META_RUNS=50 MONBAN_META_OPS=5000 go test -run TestMetamorphic ./internal/metamorphic
//	MONBAN_SEED=1234 go test -run TestMetamorphic ./internal/metamorphic   # replay
//	go test -run '^$' -fuzz '^FuzzDB$' -fuzztime 60s ./internal/metamorphic
//
// FuzzDB decodes bytes into the same operations and checks one
// configuration (chosen by the first byte) against the model. It skips
// inputs over 128 bytes: the fuzzer minimizes each new input at a cost
// quadratic in its length, and longer inputs stalled whole runs.
package metamorphic
