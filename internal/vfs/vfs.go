// Package vfs is the file-system layer under every package of monban that
// touches disk. Three implementations share the FS interface: the operating
// system's (Default), an in-memory one for tests (NewMem), and a
// fault-injecting wrapper (NewFault) that fails chosen operations and
// simulates a machine crash by discarding everything not yet synced.
//
// Invariants:
//
//  1. Write either returns an error or has handed all its bytes to the
//     file system: a process crash after Write returns loses nothing.
//  2. Only File.Sync makes a file's contents survive a machine crash, and
//     only FS.SyncDir makes a created, renamed or removed name survive one.
//  3. Lock excludes every other holder of the same name, in this process or
//     another, until the returned io.Closer is closed.
package vfs

import (
	"errors"
	"io"
)

// ErrLocked is returned by Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: locked by another holder")

// File is an open file. Files opened by Open are read-only; files returned
// by Create are write-only and append at the end.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's contents durable (invariant 2).
	Sync() error
	// Size returns the file's current length.
	Size() (int64, error)
}

// FS is the file system monban runs on. Names are paths as understood by
// path/filepath.
type FS interface {
	// Create creates name, truncating it if it exists, for writing.
	Create(name string) (File, error)
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Remove deletes a file.
	Remove(name string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and its parents.
	MkdirAll(dir string) error
	// Lock takes an exclusive lock named by a file, creating it if needed
	// (invariant 3). It fails with an error wrapping ErrLocked when the
	// lock is held.
	Lock(name string) (io.Closer, error)
	// SyncDir makes the directory's entries durable (invariant 2).
	SyncDir(dir string) error
}
