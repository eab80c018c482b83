package vfs

// faultFile counts and fails the operations on one file opened through a
// FaultFS; what gets through goes to the inner file unchanged.
type faultFile struct {
	fs    *FaultFS
	inner File
	name  string
}

var _ File = (*faultFile)(nil)

func (f *faultFile) Read(p []byte) (int, error) {
	if err := f.fs.fault(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.inner.Read(p)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fault(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

// Write hands a torn write's first half (only of the write a rule fails,
// not of those a dead disk refuses afterwards) to the inner file before failing,
// so that a reader later finds a partial record at the tail.
func (f *faultFile) Write(p []byte) (int, error) {
	torn, err := f.fs.check(OpWrite, f.name)
	if err == nil {
		return f.inner.Write(p)
	}
	if !torn || len(p) < 2 {
		return 0, err
	}
	n, werr := f.inner.Write(p[:len(p)/2])
	if werr != nil {
		return n, werr
	}
	return n, err
}

func (f *faultFile) Sync() error {
	if err := f.fs.fault(OpSync, f.name); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *faultFile) Size() (int64, error) {
	if err := f.fs.fault(OpSize, f.name); err != nil {
		return 0, err
	}
	return f.inner.Size()
}

// Close always closes the inner file, so a test that kills the disk does
// not leak open files, and then reports the injected error if there is one.
func (f *faultFile) Close() error {
	err := f.fs.fault(OpClose, f.name)
	cerr := f.inner.Close()
	if err != nil {
		return err
	}
	return cerr
}
