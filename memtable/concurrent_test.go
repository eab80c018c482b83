package memtable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

func concKey(i int) []byte   { return fmt.Appendf(nil, "key%07d", i) }
func concValue(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)*7919) }

// TestConcurrentReadersOneWriter runs one writer (adds, rotations,
// flushes) against readers doing Gets, level probes and iterator walks,
// under -race. Key i is written at sequence i+1; published says how many
// are written, flushedBelow which have left the level.
func TestConcurrentReadersOneWriter(t *testing.T) {
	const total, readers = 10000, 3
	seed := rand.Uint64()
	var (
		level        atomic.Pointer[Level]
		published    atomic.Int64 // keys [0, published) are written
		flushedBelow atomic.Int64 // keys below it may have left the level
		done         atomic.Bool
		wg           sync.WaitGroup
		errs         = make(chan error, readers+1)
	)
	level.Store(NewLevel(New(Options{})))

	wg.Add(1)
	go func() { // the one writer
		defer wg.Done()
		defer done.Store(true)
		rng := rand.New(rand.NewPCG(seed, 3))
		var firstKey []int // first key index of each immutable, oldest first
		cur := 0           // first key of the active memtable
		for i := range total {
			l := level.Load()
			if err := l.Active().Add(base.SeqNum(i+1), base.KindSet, concKey(i), concValue(i)); err != nil {
				errs <- err
				return
			}
			published.Store(int64(i + 1))
			if rng.IntN(1000) == 0 {
				next, err := l.Rotate(New(Options{}))
				if err != nil {
					errs <- err
					return
				}
				firstKey = append(firstKey, cur)
				cur = i + 1
				level.Store(next)
			}
			if len(firstKey) > 2 && rng.IntN(500) == 0 {
				l := level.Load()
				imm := l.Immutables()
				next, err := l.Flushed(imm[len(imm)-1])
				if err != nil {
					errs <- err
					return
				}
				firstKey = firstKey[1:]
				// Store the bound before the level: a reader that sees
				// the new level sees the new bound.
				flushedBelow.Store(int64(firstKey[0]))
				level.Store(next)
			}
		}
	}()

	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(10+r)))
			for !done.Load() {
				hi := int(published.Load())
				l := level.Load()
				lo := int(flushedBelow.Load())
				// The writer may add and flush past hi between the loads
				// of hi and lo (the order the level's visibility needs).
				if hi <= lo {
					continue
				}
				i := lo + rng.IntN(hi-lo)
				k := concKey(i)
				if !l.MayContainHash(filter.Hash(k)) {
					errs <- fmt.Errorf("seed %d: level false negative for written key %d", seed, i)
					return
				}
				if err := checkFound(l, k, i); err != nil {
					errs <- fmt.Errorf("seed %d: %w", seed, err)
					return
				}
				if rng.IntN(50) == 0 {
					if err := walk(l.Active(), rng); err != nil {
						errs <- fmt.Errorf("seed %d: %w", seed, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// checkFound looks key i up through the level's memtables, newest first,
// as the engine's read path does.
func checkFound(l *Level, k []byte, i int) error {
	for _, m := range append([]*Memtable{l.Active()}, l.Immutables()...) {
		v, res := m.Get(k, base.MaxSeqNum)
		switch res {
		case Found:
			if !bytes.Equal(v, concValue(i)) {
				return fmt.Errorf("key %d: value %x", i, v)
			}
			return nil
		case Deleted:
			return fmt.Errorf("key %d: deleted", i)
		}
	}
	return fmt.Errorf("key %d: not found in the level", i)
}

// walk checks that an iterator sees a sorted, stable snapshot: the same
// entries forwards and backwards, while the writer keeps adding.
func walk(m *Memtable, rng *rand.Rand) error {
	it := m.NewIter()
	defer it.Close()
	var fwd []base.InternalKey
	for ok := it.First(); ok && len(fwd) < 300; ok = it.Next() {
		fwd = append(fwd, it.Key())
		if n := len(fwd); n > 1 && base.Compare(fwd[n-2], fwd[n-1]) >= 0 {
			return fmt.Errorf("iterator out of order: %v then %v", fwd[n-2], fwd[n-1])
		}
	}
	for j := len(fwd) - 1; j >= 0; j-- {
		if j < len(fwd)-1 && !it.Prev() {
			return errors.New("iterator: Prev failed on the way back")
		}
		if j == len(fwd)-1 && !it.SeekGE(fwd[j]) {
			return errors.New("iterator: SeekGE of a seen key failed")
		}
		if base.Compare(it.Key(), fwd[j]) != 0 {
			return fmt.Errorf("iterator: backwards at %v, forwards saw %v", it.Key(), fwd[j])
		}
	}
	_ = rng
	return it.Error()
}
