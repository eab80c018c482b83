package lsm

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// maxGroupBytes bounds how much a commit leader gathers from queued writers
// into one WAL record, so a small write queued behind a leader does not wait
// for megabytes of others' I/O.
const maxGroupBytes = 1 << 20

// writerPool recycles writers: a writer is free once commit returns, as
// its leader has marked it done and let go of the queue by then.
var writerPool = sync.Pool{New: func() any { return new(writer) }}

// writer is one caller of commit waiting in the queue.
type writer struct {
	batch *Batch // nil for a rotation request from Flush
	sync  bool   // it returns only once an fsync covers its record
	done  bool
	err   error
	// epoch is returningWriters.epoch when it queued: writers of the
	// current epoch queued after the last fsync released its group.
	epoch uint64
}

// WriteOptions say how durable one write must be when it returns. A write
// given none, or nil, takes Options.Sync.
type WriteOptions struct {
	// Sync makes the write return only after an fsync of the WAL that
	// covers it, so that it survives a machine crash; without it, it
	// survives a process crash. Sync writers committed together share one
	// fsync (group commit), and NoSync writers committed with them return
	// without waiting for it.
	Sync bool
}

// Sync and NoSync are the two WriteOptions, in Pebble's form:
// db.Put(k, v, lsm.Sync).
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)

// syncFor resolves a write's options: at most one, nil or absent meaning
// Options.Sync.
func (d *DB) syncFor(opts []*WriteOptions) (bool, error) {
	switch {
	case len(opts) > 1:
		return false, fmt.Errorf("%w: %d WriteOptions for one write, at most 1", ErrInvalidOptions, len(opts))
	case len(opts) == 0 || opts[0] == nil:
		return d.opts.Sync, nil
	}
	return opts[0].Sync, nil
}

// batchPool recycles the one-write batches of Put and Delete. A batch is
// free again once Write returns: the commit pipeline is done with it by
// then, also when another writer's leader wrote it.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

// maxPooledBatch bounds the buffer of a batch going back to batchPool: one
// that grew to hold a large value would keep it, up to MaxValueSize, for
// every later Put of a few bytes, until the collector empties the pool.
const maxPooledBatch = 1 << 20

// releaseBatch returns a batch of Put or Delete to batchPool once its
// Write returned, unless it grew past maxPooledBatch.
func releaseBatch(b *Batch) {
	if cap(b.data) <= maxPooledBatch {
		batchPool.Put(b)
	}
}

// Put sets key to value. Put copies key and value before it returns: the
// caller may reuse both at once. opts (at most one) say how durable it
// must be when Put returns (WriteOptions). It fails with ErrInvalidKey or
// ErrInvalidValue for a key or value over MaxKeySize or MaxValueSize,
// ErrReadOnly on a DB opened ReadOnly, ErrClosed after Close, and with
// the sticky background error once one happened (Stats.BackgroundError).
func (d *DB) Put(key, value []byte, opts ...*WriteOptions) error {
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.Put(key, value)
	err := d.Write(b, opts...)
	releaseBatch(b)
	return err
}

// Delete removes key. Deleting a key that does not exist is not an error.
//
// Unless Options.KeepAbsentDeletes is set, a delete of a key that no filter
// on its path admits — the mutable level's quotient filters, then the Bloom
// filter of every table whose key range covers it — is proven unnecessary
// and writes nothing at all (Stats.DeletesElided): it has nothing of its
// own to make durable. Made with Sync, it is elided only while every write
// before it is durable; else it is committed and synced as any Sync write,
// so that it returns with the writes before it durable.
func (d *DB) Delete(key []byte, opts ...*WriteOptions) error {
	if err := d.checkOpen(); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	sync, err := d.syncFor(opts)
	if err != nil {
		return err
	}
	// The absent-key proof and the gate that decides whether to ask it:
	// proof.go.
	if !d.opts.KeepAbsentDeletes {
		if d.proofs.ask() {
			proved := d.provablyAbsent(key)
			d.proofs.record(proved)
			// A Sync delete must return with every write before it
			// durable, as a committed one would: elided, it can be only
			// when they are.
			if proved && (!sync || d.syncedSeq.Load() >= d.visibleSeq.Load()) {
				d.stats.deletesElided.Add(1)
				d.stats.walBytesSaved.Add(uint64(deleteRecordLen(key)))
				return nil
			}
		}
	}
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.Delete(key)
	err = d.write(b, sync)
	releaseBatch(b)
	return err
}

// Write applies every write of b atomically; opts (at most one) say how
// durable they must be when Write returns (WriteOptions). A nil b is an
// empty batch: it writes nothing, and returns the error a write would get
// now.
func (d *DB) Write(b *Batch, opts ...*WriteOptions) error {
	if err := d.checkOpen(); err != nil {
		return err // before what is wrong with the call: every write gets it
	}
	sync, err := d.syncFor(opts)
	if err != nil {
		return err
	}
	return d.write(b, sync)
}

// write is Write with its options resolved, and checkOpen passed.
func (d *DB) write(b *Batch, sync bool) error {
	if b == nil || b.Len() == 0 && b.err == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	w := writerPool.Get().(*writer)
	*w = writer{batch: b, sync: sync}
	err := d.commit(w)
	*w = writer{} // a pooled writer must not keep the caller's batch alive
	writerPool.Put(w)
	return err
}

// checkOpen returns the error every write gets now: ErrClosed after Close,
// the sticky background error once one happened.
func (d *DB) checkOpen() error {
	if d.closed.Load() {
		return ErrClosed
	}
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if err := d.stickyErr.Load(); err != nil {
		return *err
	}
	return nil
}

func checkKey(key []byte) error {
	if len(key) > MaxKeySize {
		return fmt.Errorf("%w: key of %d bytes exceeds MaxKeySize", ErrInvalidKey, len(key))
	}
	return nil
}

// commit runs w through the commit pipeline. Writers queue in FIFO order;
// the writer at the head leads: it gathers the batches queued behind it
// into one group, assigns their sequence numbers, and — without holding
// d.mu — appends the group to the WAL as one record and applies it to the
// memtable. Only the leader touches the active memtable, so the memtable
// sees one writer at a time.
func (d *DB) commit(w *writer) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return ErrClosed
	}
	w.epoch = d.mu.returning.epoch
	d.mu.writers = append(d.mu.writers, w)
	for !w.done && d.mu.writers[0] != w {
		d.mu.writeCond.Wait()
	}
	if w.done {
		d.mu.Unlock()
		return w.err
	}

	// 1. Make room: rotate a full memtable, or stall while flushes and L0
	// are too far behind.
	err := d.makeRoomForWrite(w.batch == nil)
	group := d.mu.writers[:1] // w; later appends to the queue leave it be
	pending := group          // the writers still to be told
	if err == nil && w.batch != nil {
		d.awaitReturning()
		group = d.gatherGroup()
		// 2. Sequence numbers, in queue order (invariant 1) but for one
		// exception: the writers that need no fsync go first, so they can
		// be published and return before it.
		order, unsynced := d.syncOrder(group)
		first := d.mu.lastSeq + 1
		rec := d.groupRecord(order, first)
		_, count, _ := batchHeader(rec)
		d.mu.lastSeq += base.SeqNum(count)
		walw, mem := d.mu.wal, d.rs.Load().mem.Active()
		d.mu.Unlock()

		// 3. WAL, then memtable, outside the lock.
		if _, err = walw.Append(rec); err == nil {
			d.stats.walBytes.Add(uint64(len(rec)))
			err = d.applyToMemtable(mem, rec)
		}
		if h := d.hooks.beforePublish; h != nil {
			h()
		}
		d.mu.Lock()
		pending = order
		if err == nil && unsynced < len(order) {
			// 4a. Publish the writers that need no fsync and let them
			// go; then the fsync, still at the head of the queue, so no
			// rotation can close the WAL under it and the writers queuing
			// meanwhile form the next group: one fsync for all of them.
			if unsynced > 0 {
				d.visibleSeq.Store(uint64(first) + uint64(entries(order[:unsynced])) - 1)
				d.release(order[:unsynced], nil)
				pending = order[unsynced:]
			}
			d.mu.Unlock()
			start := time.Now()
			err = walw.Sync()
			d.stats.walSyncs.Add(1)
			d.mu.Lock()
			d.mu.returning.released(len(order), time.Since(start))
		} else {
			d.mu.returning.released(0, 0)
		}
		if err != nil {
			d.setBgErr(fmt.Errorf("monban: commit: %w", err))
		} else {
			// 4. Publish.
			d.visibleSeq.Store(uint64(first) + uint64(count) - 1)
			if unsynced < len(order) {
				// The fsync covered the WAL up to this group's end.
				d.syncedSeq.Store(uint64(first) + uint64(count) - 1)
			}
			d.stats.commits.Add(uint64(len(order)))
		}
	}
	d.release(pending, err)
	// The queue's backing array and the order buffer would otherwise keep
	// the writers, and through them their batches, until overwritten.
	clear(d.mu.writers[:len(group)])
	d.mu.writers = d.mu.writers[len(group):]
	clear(d.mu.groupOrder)
	d.mu.groupOrder = d.mu.groupOrder[:0]
	d.mu.Unlock()
	return err
}

// release tells writers their commit is done, with err. Once told, a
// writer returns and may be reused: the leader does not touch it again.
// d.mu is held.
func (d *DB) release(writers []*writer, err error) {
	for _, g := range writers {
		g.done, g.err = true, err
	}
	d.mu.writeCond.Broadcast()
}

// syncOrder returns the group in commit order and how many of its first
// writers need no fsync: those, then the ones that do, each in queue
// order. Writers queued together are concurrent — none returned before
// another called — so any order of them is one a sequential history could
// have. A group of one kind keeps the queue's order as it is.
func (d *DB) syncOrder(group []*writer) (order []*writer, unsynced int) {
	for _, g := range group {
		if !g.sync {
			unsynced++
		}
	}
	if unsynced == 0 || unsynced == len(group) {
		return group, unsynced
	}
	order = d.mu.groupOrder[:0]
	for _, sync := range []bool{false, true} {
		for _, g := range group {
			if g.sync == sync {
				order = append(order, g)
			}
		}
	}
	d.mu.groupOrder = order
	return order, unsynced
}

// entries counts the writes of writers' batches.
func entries(writers []*writer) int {
	n := 0
	for _, g := range writers {
		n += g.batch.Len()
	}
	return n
}

// walWriter is the log a commit appends to: a wal.Writer, whose Append
// has reached the OS when it returns, or with Options.BufferedWAL a
// wal.BufferedWriter, whose Append is in memory until its background
// writer hands it over.
type walWriter interface {
	Append(record []byte) (int64, error)
	Sync() error
	// Seal syncs the log and marks its end, for a rotation to the next.
	Seal() error
	Size() int64
	Close() error
}

// newWALWriter returns the writer of WAL num, in f, with the DB's
// identity record appended (walIdentity). Its records are framed as a
// recyclable log's, stamped with num, so that f can one day be reused for
// a later WAL (recycleWAL) and f may now hold an older WAL's bytes. On an
// error f is closed.
func (d *DB) newWALWriter(f vfs.File, num uint64) (walWriter, error) {
	var w walWriter
	if d.opts.BufferedWAL {
		w = wal.NewRecyclableBufferedWriter(f, num)
	} else {
		d.preallocateWAL(f, num)
		mw := wal.NewRecyclableWriter(f, num)
		mw.Prepare() // here, where the log is created, not in its first commit
		w = mw
	}
	if _, err := w.Append(appendWALIdentity(nil, d.dbID)); err != nil {
		w.Close()
		return nil, fmt.Errorf("monban: starting WAL %06d: %w", num, err)
	}
	return w, nil
}

// preallocateWAL reserves in one request the space WAL num will fill: a
// full memtable's commits, which take about MemtableSize in the log, and
// an eighth more for framing and the group that crosses the line. Taken a
// window at a time among other files' allocations, the log's blocks would
// come in pieces, and past four of them each durable commit's fsync costs
// more (vfs.Preallocator; docs/write-path.md, "Preallocated WALs"). The
// writer's Close cuts the file to its records, which releases the rest.
// Only a hint: where it fails, the windows reserve their space as before.
func (d *DB) preallocateWAL(f vfs.File, num uint64) {
	p, ok := f.(vfs.Preallocator)
	if !ok {
		return
	}
	if err := p.Preallocate(d.opts.MemtableSize + d.opts.MemtableSize/8); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		d.opts.Logger.Warn("monban: preallocating a WAL", "file", manifest.MakeFilename(manifest.KindLog, num), "err", err)
	}
}

// gatherGroup returns the leader and the batches queued behind it, up to
// maxGroupBytes. Rotation requests (nil batches) end a group: they need
// their own trip through makeRoomForWrite. So does a Sync writer behind a
// NoSync leader: the leader makes its group's fsync, and returns after
// it, with its error, where a NoSync writer returns before any
// (WriteOptions.Sync); the Sync writer leads the next group, which takes
// the NoSync writers queued behind it and lets them go first.
func (d *DB) gatherGroup() []*writer {
	leader := d.mu.writers[0]
	size := leader.batch.Size()
	n := 1
	for ; n < len(d.mu.writers); n++ {
		g := d.mu.writers[n]
		if g.batch == nil || g.sync && !leader.sync || size+g.batch.Size() > maxGroupBytes {
			break
		}
		size += g.batch.Size()
	}
	return d.mu.writers[:n]
}

// groupRecord encodes a commit group as one batch record starting at seq
// first: one header, then every batch's entries in queue order.
func (d *DB) groupRecord(group []*writer, first base.SeqNum) []byte {
	if len(group) == 1 {
		return group[0].batch.encode(first)
	}
	var all Batch
	for _, g := range group {
		if all.data == nil {
			all.grow(g.batch.Size())
		}
		all.data = append(all.data, g.batch.data[batchHeaderLen:]...)
		all.count += g.batch.count
	}
	return all.encode(first)
}

// applyToMemtable inserts every entry of a committed record. A delete is
// always a tombstone, even when it meets its key's only put here: removing
// the put in place would show the delete to readers whose sequence number
// predates it (package doc, invariant 1). The flush drops both instead,
// where no reader can tell.
func (d *DB) applyToMemtable(mem *memtable.Memtable, rec []byte) error {
	_, err := decodeBatch(rec, func(e batchEntry) error { return d.apply(mem, e) })
	return err
}

// returningWriters follows the writers the last fsync released. With N
// writers committing Sync concurrently, the groups would otherwise
// alternate: the writers that queued during one fsync form the next group
// while those it released are still on their way back, so each fsync
// covers about N/2 commits and the released half waits a whole fsync more.
type returningWriters struct {
	epoch    uint64        // bumped by every release
	group    int           // writers the last fsync released; 0 when it was none
	syncTime time.Duration // how long that fsync took
}

func (r *returningWriters) released(group int, syncTime time.Duration) {
	r.epoch++
	r.group, r.syncTime = group, syncTime
}

// returningWaitDivisor bounds awaitReturning's wait to the last fsync's
// time over it: the most a Sync commit's latency grows when the writers
// the wait expects never come back.
const returningWaitDivisor = 4

// awaitReturning holds a group that will fsync back until the writers
// the last fsync released have queued again, so that one fsync covers
// them too; it gives up after a quarter of the last fsync's time. It does
// not wait while any queued writer needs no fsync (those return as soon
// as their record is written, and must not wait for others) or once as
// many writers queued since the release as it released: a lone writer,
// queuing again behind its own fsync, never waits. d.mu is held; the wait
// yields the processor with d.mu unlocked, so the writers it waits for
// can queue.
func (d *DB) awaitReturning() {
	r := &d.mu.returning
	if r.group == 0 {
		return
	}
	var deadline time.Time
	for {
		back := 0
		for _, g := range d.mu.writers {
			if g.batch == nil || !g.sync {
				return
			}
			if g.epoch == r.epoch {
				back++
			}
		}
		if back >= r.group {
			return
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(r.syncTime / returningWaitDivisor)
		} else if now.After(deadline) {
			return
		}
		d.mu.Unlock()
		runtime.Gosched()
		d.mu.Lock()
	}
}
