package offheap

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewIsZeroedAndWritable(t *testing.T) {
	for _, n := range []int{0, 1, MinSize - 1, MinSize, MinSize + 1, 1 << 20} {
		b := New(n)
		m := b.Bytes()
		if len(m) != n || cap(m) != n {
			t.Fatalf("New(%d): len %d cap %d", n, len(m), cap(m))
		}
		for i, c := range m {
			if c != 0 {
				t.Fatalf("New(%d): byte %d is %#x, not zero", n, i, c)
			}
		}
		for i := range m {
			m[i] = byte(i)
		}
		for i, c := range b.Bytes() {
			if c != byte(i) {
				t.Fatalf("New(%d): byte %d reads %#x after writing %#x", n, i, c, byte(i))
			}
		}
		b.Release()
	}
}

// TestReleaseFreesAtOnce checks invariant 5: the mapped bytes rise by a
// buffer's size at New and fall back at its last Release, with no
// collection between, and a Ref holds the memory until its own Release.
func TestReleaseFreesAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	const n = 2 * MinSize
	before := Stats()
	b := New(n)
	if got := Stats().Mapped - before.Mapped; got != n {
		t.Fatalf("New(%d) raised the mapped bytes by %d", n, got)
	}
	b.Bytes()[0] = 42
	held := b.Ref()
	b.Release()
	if got := Stats().Mapped - before.Mapped; got != n {
		t.Fatalf("a Release with a Ref left lowered the mapped bytes to %+d", got)
	}
	if got := held.Bytes()[0]; got != 42 {
		t.Fatalf("the remaining holder reads %d, want 42", got)
	}
	held.Release()
	after := Stats()
	if after.Mapped != before.Mapped || after.Leaked != before.Leaked {
		t.Fatalf("after the last Release: mapped %+d, leaked %+d; want both unchanged",
			after.Mapped-before.Mapped, after.Leaked-before.Leaked)
	}
}

func TestMisusePanics(t *testing.T) {
	for _, size := range []int{1, 2 * MinSize} {
		mustPanic(t, "Release after the last", func() {
			b := New(size)
			b.Release()
			b.Release()
		})
		mustPanic(t, "Ref after the last Release", func() {
			b := New(size)
			b.Release()
			b.Ref()
		})
	}
	var none *Buffer
	none.Release() // a holder of no buffer releases nothing
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// waitLeaked collects garbage until the safety net has freed at least
// want Buffers in all, or fails after a few seconds.
func waitLeaked(t *testing.T, want uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for Stats().Leaked < want {
		if time.Now().After(deadline) {
			t.Fatalf("the safety net freed %d Buffers, want %d: an unreachable Buffer kept its memory", Stats().Leaked, want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestUnreleasedBufferIsCounted: a Buffer dropped without its Release is
// freed by the safety net once collected, and counted.
func TestUnreleasedBufferIsCounted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	before := Stats()
	for range 8 {
		New(2 * MinSize).Bytes()[0] = 1
	}
	waitLeaked(t, before.Leaked+8)
	if got := Stats().Mapped; got > before.Mapped {
		t.Fatalf("mapped bytes %d after the safety net freed them all, %d before", got, before.Mapped)
	}
}

func TestReachableBufferIsKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	kept := New(2 * MinSize)
	kept.Bytes()[0] = 42
	before := Stats().Leaked
	New(2 * MinSize) // unreachable at once: its cleanup proves a cycle ran
	waitLeaked(t, before+1)
	for range 3 {
		runtime.GC()
	}
	if got := kept.Bytes()[0]; got != 42 {
		t.Fatalf("a reachable buffer reads %d, want 42", got)
	}
	kept.Release()
}

// TestOnFreeRunsWhenTheMemoryGoes: OnFree's func runs once, at the last
// Release of a heap or a mapped Buffer, not at an earlier one, and from
// the safety net for a mapped Buffer nobody released.
func TestOnFreeRunsWhenTheMemoryGoes(t *testing.T) {
	for _, n := range []int{64, 2 * MinSize} {
		var runs atomic.Int32
		b := New(n)
		b.OnFree(func() { runs.Add(1) })
		b.Ref()
		b.Release()
		if runs.Load() != 0 {
			t.Fatalf("%d bytes: OnFree ran with a reference left", n)
		}
		b.Release()
		if runs.Load() != 1 {
			t.Fatalf("%d bytes: OnFree ran %d times at the last Release, want 1", n, runs.Load())
		}
	}
	if runtime.GOOS != "linux" {
		return // no mapped buffers, no safety net
	}
	var runs atomic.Int32
	before := Stats()
	New(2 * MinSize).OnFree(func() { runs.Add(1) })
	waitLeaked(t, before.Leaked+1)
	deadline := time.Now().Add(5 * time.Second)
	for runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the net counts before it runs the func
	}
	if runs.Load() != 1 {
		t.Fatalf("the safety net ran OnFree %d times, want 1", runs.Load())
	}
}
