package wal

import (
	"errors"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// ErrCorruption is wrapped by the error a Reader returns for damage that is
// not a torn tail: bytes that fail their checksum or framing with an intact
// fragment after them (doc.go, invariant 4).
var ErrCorruption = base.ErrCorruption

// ErrClosed is returned by a Writer's methods after Close, and wrapped by
// the error of an Append or Seal after Seal.
var ErrClosed = errors.New("closed")

var (
	errSealed     = fmt.Errorf("wal: log sealed: %w", ErrClosed)
	errLegacySeal = errors.New("wal: Seal of a legacy log, which has no seal (NewRecyclableWriter makes logs that do)")
)

// CorruptionError names the log and the offset of the first damaged
// fragment. It wraps ErrCorruption. The engine uses Offset to say how much
// of a log it could trust.
type CorruptionError struct {
	Name   string // the name given to NewReader
	Offset int64  // file offset of the damaged fragment (or block trailer)
	Record int64  // file offset where the damaged record began
	Reason string // what failed: "checksum mismatch", "LAST without FIRST", …
}

func (e *CorruptionError) Error() string {
	if e.Record != e.Offset {
		return fmt.Sprintf("wal %s: offset %d (record at %d): %s: %v", e.Name, e.Offset, e.Record, e.Reason, ErrCorruption)
	}
	return fmt.Sprintf("wal %s: offset %d: %s: %v", e.Name, e.Offset, e.Reason, ErrCorruption)
}

func (e *CorruptionError) Unwrap() error { return ErrCorruption }
