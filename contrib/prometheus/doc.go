// Package prometheus exports a monban DB's Stats as Prometheus metrics.
//
// It lives in its own module (github.com/monbandb/monban/contrib/prometheus)
// so that the engine's module never depends on the Prometheus client.
//
// # Basics
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(monbanprom.NewCollector(db))
//
// The Collector holds no counters of its own: every Collect (every scrape)
// calls db.Stats() once and turns that snapshot into metrics, so all the
// metrics of one scrape agree with each other.
//
// # Metrics
//
// Every name starts with "monban_" (Namespace). Counters end in "_total"
// and only grow while the DB is open; gauges describe the tree now.
// Per-level metrics carry a "level" label, "0" to "6"; their sum over
// levels is Stats.Total, but for the level's size target and score
// (monban_level_target_bytes, monban_level_score), which are the level's
// own and sum to nothing.
//
//	monban_level_files                         gauge    tables in the level
//	monban_level_bytes                         gauge    table bytes in the level
//	monban_level_filter_probes_total           counter  Get probes of its Bloom filters
//	monban_level_filter_negatives_total        counter  probes answered "absent"
//	monban_level_filter_false_positives_total  counter  "maybe" for a key not there
//	monban_level_cache_hits_total              counter  data blocks found in the cache
//	monban_level_blocks_read_total             counter  data blocks read from files
//	monban_level_block_read_bytes_total        counter  bytes of those blocks
//	monban_level_compaction_input_bytes_total  counter  table bytes compactions took from it
//	monban_level_table_written_bytes_total     counter  table bytes written into it
//
// and, for the whole DB: memtable filter negatives and false positives,
// the tree-wide filter's probes, negatives, lines read, bytes and entries
// (monban_tree_filter_*, zero unless Options.FilterScope is TreeWide),
// deletes elided (and the WAL bytes they saved), proof probes, WAL bytes,
// flushes and queued memtables, entries dropped by flushes and compactions
// (label "reason"), compactions (label "kind": move, l0, intra_l0, size,
// rewrite, rest, delete_only),
// compaction reads, space reclaimed, write slowdowns, stalls and stall
// seconds, write amplification, and monban_background_error, 1 once a
// background error made the DB read-only. Describe lists them all, with
// their help text.
//
// # Caveats
//
// After Close the counters stay readable but the shape gauges (files,
// bytes, queued memtables) read zero, as Stats documents; unregister the
// Collector when its DB is closed.
package prometheus
