package raft

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/monbandb/monban/lsm"
)

// Command kinds, the first byte of a command (doc.go, "Commands").
const (
	cmdPut    = 1
	cmdDelete = 2
)

// ErrBadCommand is what FSM.Apply returns, as the response of an entry
// whose data is no command. The FSM's state is unchanged by it, on every
// node alike.
var ErrBadCommand = errors.New("monban raft: not a command")

// PutCommand returns the data of a log entry that sets key to value.
func PutCommand(key, value []byte) []byte {
	p := binary.AppendUvarint([]byte{cmdPut}, uint64(len(key)))
	return append(append(p, key...), value...)
}

// DeleteCommand returns the data of a log entry that deletes key.
func DeleteCommand(key []byte) []byte {
	p := binary.AppendUvarint([]byte{cmdDelete}, uint64(len(key)))
	return append(p, key...)
}

// command is a decoded command; key and value alias the entry's data.
type command struct {
	kind       byte
	key, value []byte
}

func decodeCommand(p []byte) (command, error) {
	if len(p) == 0 {
		return command{}, fmt.Errorf("%w: empty", ErrBadCommand)
	}
	c := command{kind: p[0]}
	n, w := binary.Uvarint(p[1:])
	switch {
	case w <= 0 || n > uint64(len(p)-1-w):
		return command{}, fmt.Errorf("%w: key length does not fit", ErrBadCommand)
	case w != len(binary.AppendUvarint(nil, n)):
		// One command, one encoding: what PutCommand and DeleteCommand
		// write, as doc.go promises.
		return command{}, fmt.Errorf("%w: key length in %d bytes, where it takes fewer", ErrBadCommand, w)
	}
	rest := p[1+w:]
	c.key, c.value = rest[:n], rest[n:]
	switch {
	case c.kind == cmdDelete && len(c.value) != 0:
		return command{}, fmt.Errorf("%w: %d bytes after a delete's key", ErrBadCommand, len(c.value))
	case c.kind != cmdPut && c.kind != cmdDelete:
		return command{}, fmt.Errorf("%w: kind %d", ErrBadCommand, c.kind)
	}
	return c, nil
}

// fits refuses a command whose key, with the FSM's prefix byte, or value
// the engine cannot store. It must be an answer for the entry alone: an
// oversized write would fail the whole lsm batch, and with it the entries
// raft happened to batch beside it, which differ from replica to replica.
func (c command) fits() error {
	switch {
	case 1+len(c.key) > lsm.MaxKeySize:
		return fmt.Errorf("%w: a key of %d bytes (at most %d)", ErrBadCommand, len(c.key), lsm.MaxKeySize-1)
	case len(c.value) > lsm.MaxValueSize:
		return fmt.Errorf("%w: a value of %d bytes (at most %d)", ErrBadCommand, len(c.value), lsm.MaxValueSize)
	}
	return nil
}
