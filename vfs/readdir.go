package vfs

import "path/filepath"

// Entry is an entry of a directory: a file, or a directory if Dir.
type Entry struct {
	Name string
	Dir  bool
}

// ReadDir returns the entries of dir, sorted by name, telling files from
// directories. A DB's own entries are files: a directory under one of
// their names was made by someone else, and reading it as a table or a
// log, or removing it as obsolete, would be wrong. The OS file system,
// MemFS and FaultFS tell the two apart as they list; another FS costs a
// List of each entry, which fails for a file.
func ReadDir(fsys FS, dir string) ([]Entry, error) {
	if r, ok := fsys.(dirReader); ok {
		return r.readDir(dir)
	}
	names, err := fsys.List(dir)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(names))
	for i, name := range names {
		_, err := fsys.List(filepath.Join(dir, name))
		entries[i] = Entry{Name: name, Dir: err == nil}
	}
	return entries, nil
}

// dirReader is an FS that tells files from directories at the cost of
// List.
type dirReader interface {
	readDir(dir string) ([]Entry, error)
}

// names returns the names of entries.
func names(entries []Entry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}
