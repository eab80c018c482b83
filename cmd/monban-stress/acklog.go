package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// keyName is the DB key of key index i. Zero padding makes the byte order
// of keys their numeric order, so a scan's order can be checked on indexes.
func keyName(i int) []byte { return fmt.Appendf(nil, "k%07d", i) }

// parseKey inverts keyName; ok is false for anything keyName cannot make.
func parseKey(k []byte) (int, bool) {
	if len(k) != 8 || k[0] != 'k' {
		return 0, false
	}
	n, err := strconv.Atoi(string(k[1:]))
	return n, err == nil && n >= 0
}

// entry is one write of an op: a put of a value of size bytes, or a delete.
type entry struct {
	key  int
	del  bool
	size int
}

// op is one DB call that writes: a Put or Delete (one entry) or a Batch.
// (writer, seq) names it; writers are unique across cycles, so a value
// names the one op that wrote it.
type op struct {
	writer, seq uint64
	entries     []entry
	// started and acked are the ack log lines of its "S" and "D" records,
	// counted from 1; acked is 0 when there is no "D" (in flight at the
	// kill). A checkpoint's window is a range of lines.
	started, acked int
	// sync makes the call with lsm.Sync, whatever the option set says: a
	// kill is a process crash, which every acknowledged write survives
	// either way, so it changes what the commit pipeline does, not what
	// the check expects. Not logged.
	sync bool
	// rangeDel makes the call a DeleteRange over the keys of entries,
	// which are deletes of consecutive keys: logged as they are, since to
	// the check it is a batch of those deletes (no other key sorts between
	// two consecutive keyName keys).
	rangeDel bool
}

// value is what op (writer, seq) puts under key: "key.writer.seq." and
// then a filler that depends on all three, so that a value read back names
// exactly which write it saw, and a value cut short, spliced from two
// writes or put under another key does not pass for any write (the filler
// depends on the size too, so a prefix of a value is not a shorter one).
func value(key int, writer, seq uint64, size int) []byte {
	v := fmt.Appendf(nil, "%d.%d.%d.", key, writer, seq)
	for i := len(v); i < size; i++ {
		v = append(v, 'a'+byte((uint64(i)*7+uint64(key)+writer*3+seq+uint64(size))%26))
	}
	return v
}

// parseValue names the write that put v under key, or says v is no such
// write's value.
func parseValue(key int, v []byte) (writer, seq uint64, ok bool) {
	f := bytes.SplitN(v, []byte("."), 4)
	if len(f) != 4 {
		return 0, 0, false
	}
	k, err1 := strconv.Atoi(string(f[0]))
	w, err2 := strconv.ParseUint(string(f[1]), 10, 64)
	s, err3 := strconv.ParseUint(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || k != key {
		return 0, 0, false
	}
	return w, s, bytes.Equal(v, value(key, w, s, len(v)))
}

// ackLog is the child's side of the ack log (doc.go, "The ack log"). Each
// record is one write(2) on an O_APPEND file, made under mu so that records
// never interleave. It is not fsynced: a SIGKILL ends the process, not the
// kernel, and the page cache the parent reads from keeps every byte that
// write(2) returned for. An fsync per record would cost a disk flush per op
// and slow the workload the DB is meant to be stressed by.
type ackLog struct {
	mu sync.Mutex
	f  *os.File
}

func openAckLog(path string) (*ackLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &ackLog{f: f}, nil
}

// started records that o is about to be called. It must return before the
// DB sees o: a write the parent has no record of is, to it, unexpected.
func (l *ackLog) started(o *op) error {
	line := fmt.Appendf(nil, "S %d %d", o.writer, o.seq)
	for _, e := range o.entries {
		if e.del {
			line = fmt.Appendf(line, " d%d", e.key)
		} else {
			line = fmt.Appendf(line, " p%d:%d", e.key, e.size)
		}
	}
	return l.write(append(line, '\n'))
}

// done records that o was acknowledged: from here on it must survive.
func (l *ackLog) done(o *op) error {
	return l.write(fmt.Appendf(nil, "D %d %d\n", o.writer, o.seq))
}

func (l *ackLog) write(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.f.Write(p)
	return err
}

// checkpoint is one Checkpoint call of the child, as its "C" and "K"
// records tell it.
type checkpoint struct {
	id   int
	name string // its directory in the run's ckpt/
	// started and done are the ack log lines of its "C" and "K" records;
	// done is 0 when there is no "K" (the kill cut it short).
	started, done int
}

// checkpointStarted records that the checkpoint id is about to be taken
// into ckpt/name: every op acknowledged before it must be in it.
func (l *ackLog) checkpointStarted(id int, name string) error {
	return l.write(fmt.Appendf(nil, "C %d %s\n", id, name))
}

// checkpointDone records that Checkpoint returned nil: no op started after
// it may be in it.
func (l *ackLog) checkpointDone(id int) error {
	return l.write(fmt.Appendf(nil, "K %d\n", id))
}

// readAckLog parses a cycle's ack log into its ops in the order they
// started, and its checkpoints in the same order. A last line without its
// newline is a record the kill cut short: a torn "S" or "C" means the call
// was never made, a torn "D" or "K" that it was not yet reported done, so
// dropping it is safe either way.
func readAckLog(data []byte) ([]*op, []*checkpoint, error) {
	var ops []*op
	var ckpts []*checkpoint
	opByID := map[[2]uint64]*op{}
	ckptByID := map[int]*checkpoint{}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines[:len(lines)-1] {
		n := i + 1
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, nil, fmt.Errorf("ack log line %d: %q: too short", n, line)
		}
		if f[0] == "C" || f[0] == "K" {
			id, err := strconv.Atoi(f[1])
			switch {
			case err != nil:
				return nil, nil, fmt.Errorf("ack log line %d: %q: bad checkpoint id", n, line)
			case f[0] == "C" && len(f) == 3 && ckptByID[id] == nil:
				ckptByID[id] = &checkpoint{id: id, name: f[2], started: n}
				ckpts = append(ckpts, ckptByID[id])
			case f[0] == "K" && len(f) == 2 && ckptByID[id] != nil && ckptByID[id].done == 0:
				ckptByID[id].done = n
			default:
				return nil, nil, fmt.Errorf("ack log line %d: %q: not a start of a new checkpoint or the end of a started one", n, line)
			}
			continue
		}
		if len(f) < 3 {
			return nil, nil, fmt.Errorf("ack log line %d: %q: too short", n, line)
		}
		w, err1 := strconv.ParseUint(f[1], 10, 64)
		s, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("ack log line %d: %q: bad op id", n, line)
		}
		id := [2]uint64{w, s}
		switch {
		case f[0] == "S" && opByID[id] == nil:
			o := &op{writer: w, seq: s, started: n}
			for _, ef := range f[3:] {
				e, err := parseEntry(ef)
				if err != nil {
					return nil, nil, fmt.Errorf("ack log line %d: %q: %v", n, line, err)
				}
				o.entries = append(o.entries, e)
			}
			opByID[id] = o
			ops = append(ops, o)
		case f[0] == "D" && opByID[id] != nil && opByID[id].acked == 0:
			opByID[id].acked = n
		default:
			return nil, nil, fmt.Errorf("ack log line %d: %q: not a start of a new op or the end of a started one", n, line)
		}
	}
	return ops, ckpts, nil
}

func parseEntry(f string) (entry, error) {
	if strings.HasPrefix(f, "d") {
		k, err := strconv.Atoi(f[1:])
		return entry{key: k, del: true}, err
	}
	ks, ss, ok := strings.Cut(strings.TrimPrefix(f, "p"), ":")
	k, err1 := strconv.Atoi(ks)
	s, err2 := strconv.Atoi(ss)
	if !ok || !strings.HasPrefix(f, "p") || err1 != nil || err2 != nil {
		return entry{}, fmt.Errorf("bad entry %q", f)
	}
	return entry{key: k, size: s}, nil
}
