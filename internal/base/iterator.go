package base

// InternalIterator is the cursor every sorted source of internal entries
// offers: memtables, SSTables, and the merging iterators built from them.
//
// Contract: positioning methods return Valid(). Key and Value are valid
// only while the iterator stays on the entry; callers copy what they keep.
// When a positioning method returns false, Error says whether the iterator
// is exhausted (nil) or failed. Close releases resources and returns the
// first error seen.
type InternalIterator interface {
	// SeekGE moves to the first entry whose internal key is >= key.
	SeekGE(key InternalKey) bool
	// SeekLT moves to the last entry whose internal key is < key.
	SeekLT(key InternalKey) bool
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() InternalKey
	Value() []byte
	Error() error
	Close() error
}
