package lsm

// MultiGet reads keys as one consistent read: every key at the same
// sequence number, through the same read state, as a snapshot taken at the
// call would see them. values[i] is the value of keys[i] (the caller's to
// keep), or nil with errs[i] == ErrNotFound when it has none; errs[i] is
// any other error of that key's read. What it adds over as many Gets is
// that all keys are read in one state, which two Gets are not; it costs
// about what they cost (BenchmarkMultiGet). It does not yet batch the
// lookups themselves (sorting keys, probing each table's filter once per
// batch).
func (d *DB) MultiGet(keys [][]byte) (values [][]byte, errs []error) {
	values, errs = make([][]byte, len(keys)), make([]error, len(keys))
	if d.closed.Load() {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return values, errs
	}
	rs, seq := d.currentView()
	if rs == nil {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return values, errs
	}
	defer rs.unref()
	for i, k := range keys {
		values[i], errs[i] = d.closedOr(d.get(rs, k, seq, nil))
	}
	return values, errs
}
