package sstable

// Peek returns the reader of table fileNum and a func that releases it, if
// the table is open already; it never opens a file, so it never reads disk.
// The absent-key proofs use it: a table that is not open cannot vouch for a
// key, and the caller treats it as "maybe".
func (c *TableCache) Peek(fileNum uint64) (*Reader, func(), bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.tables[fileNum]
	if c.closed || e == nil {
		return nil, nil, false
	}
	select {
	case <-e.ready:
	default:
		return nil, nil, false // still opening
	}
	if e.err != nil {
		return nil, nil, false
	}
	e.refs++
	return e.r, e.release, true
}
