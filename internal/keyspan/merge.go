package keyspan

// Merge returns the fragments of every tombstone of every one of ss: the
// Spans that Fragment would build from all their tombstones together. A
// reader over several sources (an iterator over the whole tree) asks one
// Spans instead of each source's, and a compaction merges its inputs'
// this way. The result shares keys with ss.
func Merge(ss ...Spans) Spans {
	var only Spans
	n := 0
	for _, s := range ss {
		if s.Len() > 0 {
			only, n = s, n+1
		}
	}
	if n <= 1 {
		return only // already fragmented, or empty
	}
	var ts []Tombstone
	for _, s := range ss {
		for _, sp := range s.spans {
			for _, seq := range sp.Seqs {
				ts = append(ts, Tombstone{Start: sp.Start, End: sp.End, Seq: seq})
			}
		}
	}
	return Fragment(ts)
}
