package offheap

import (
	"runtime"
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
	}
}

// waitUnmapped collects garbage until cleanups have returned at least want
// mappings in all, or fails after a few seconds.
func waitUnmapped(t *testing.T, want uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for unmapped.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d mappings returned, want %d: an unreachable Buffer kept its memory", unmapped.Load(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestUnreachableBufferIsReturned(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	before := unmapped.Load()
	for range 8 {
		New(2 * MinSize).Bytes()[0] = 1
	}
	waitUnmapped(t, before+8)
}

func TestReachableBufferIsKept(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	kept := New(2 * MinSize)
	kept.Bytes()[0] = 42
	before := unmapped.Load()
	New(2 * MinSize) // unreachable at once: its cleanup proves a cycle ran
	waitUnmapped(t, before+1)
	for range 3 {
		runtime.GC()
	}
	if got := kept.Bytes()[0]; got != 42 {
		t.Fatalf("a reachable buffer reads %d, want 42", got)
	}
	runtime.KeepAlive(kept)
}
