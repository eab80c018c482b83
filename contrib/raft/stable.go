package raft

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/monbandb/monban/lsm"
)

// Set stores val under key, synced: raft keeps its current term and vote
// here, which must survive a crash before raft acts on them.
func (s *Store) Set(key, val []byte) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.db.Put(stableKey(key), val, lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: set %q: %w", key, err)
	}
	return nil
}

// Get returns the value Set under key, or ErrKeyNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	v, err := s.db.Get(stableKey(key))
	switch {
	case errors.Is(err, lsm.ErrNotFound):
		return nil, ErrKeyNotFound
	case err != nil:
		return nil, fmt.Errorf("monban raft: get %q: %w", key, err)
	}
	return v, nil
}

// SetUint64 stores val under key as 8 bytes, big-endian.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value SetUint64 stored under key, or 0 and
// ErrKeyNotFound.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("monban raft: uint64 %q: %w: value of %d bytes", key, lsm.ErrCorruption, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
