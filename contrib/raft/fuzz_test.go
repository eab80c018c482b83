package raft

import (
	"bytes"
	"errors"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// FuzzDecodeCommand: a command decodes and encodes back to its bytes, or
// is ErrBadCommand.
func FuzzDecodeCommand(f *testing.F) {
	f.Add(PutCommand([]byte("k"), []byte("v")))
	f.Add(DeleteCommand([]byte("key")))
	f.Add(PutCommand(nil, nil))
	f.Add([]byte{cmdPut, 0x81, 0x00, 'a', 'v'}) // the key length in two bytes where one does
	f.Fuzz(func(t *testing.T, p []byte) {
		c, err := decodeCommand(p)
		if err != nil {
			if !errors.Is(err, ErrBadCommand) {
				t.Fatalf("error %v is not ErrBadCommand", err)
			}
			return
		}
		again := PutCommand(c.key, c.value)
		if c.kind == cmdDelete {
			again = DeleteCommand(c.key)
		}
		if !bytes.Equal(again, p) {
			t.Fatalf("%x decodes as %+v, which encodes as %x: PutCommand and DeleteCommand never wrote it", p, c, again)
		}
	})
}

// FuzzReadSnapshot: whatever the stream, readSnapshot returns an error or
// has written a directory whose files it named, never outside it.
func FuzzReadSnapshot(f *testing.F) {
	mem := vfs.NewMem()
	src, err := OpenFSM("src", &lsm.Options{FS: mem})
	if err != nil {
		f.Fatal(err)
	}
	src.Apply(&hraft.Log{Index: 1, Type: hraft.LogCommand, Data: PutCommand([]byte("k"), []byte("v"))})
	snap, err := src.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	var good memSink
	if err := snap.Persist(&good); err != nil {
		f.Fatal(err)
	}
	snap.Release()
	src.Close()
	// The seed must be a stream readSnapshot takes, or the fuzzer starts
	// from nothing.
	if err := readSnapshot(vfs.NewMem(), ".", bytes.NewReader(good.Bytes())); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add([]byte(snapshotMagic + "\x00\x00\x00\x00\x00"))
	f.Add([]byte(snapshotMagic + "\x01a\x01x\x00"))
	f.Fuzz(func(t *testing.T, p []byte) {
		fsys := vfs.NewMem()
		if err := fsys.MkdirAll("dst"); err != nil {
			t.Fatal(err)
		}
		if err := readSnapshot(fsys, "dst", bytes.NewReader(p)); err != nil {
			return
		}
		root, err := fsys.List(".")
		if err != nil || len(root) != 1 || root[0] != "dst" {
			t.Fatalf("a stream wrote outside its directory: %v, %v", root, err)
		}
	})
}
