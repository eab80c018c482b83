package main

import (
	"testing"
	"time"
)

// TestETA drives the estimate with a fake clock at a constant rate: no ETA
// before it can be estimated, then one that converges to the true time
// left (exact but for the workers' 256-op counting steps).
func TestETA(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const total, rate = 1_000_000, 50_000 // ops, ops per second: 20 s in all
	e := eta{start: start, total: total}
	for _, c := range []struct {
		at   time.Duration
		done int64
	}{{0, 0}, {500 * time.Millisecond, 25_000}, {2 * time.Second, 0}} {
		if d, ok := e.left(start.Add(c.at), c.done); ok {
			t.Errorf("at %v with %d done: ETA %v, want none yet", c.at, c.done, d)
		}
		if got := describe("fill", e, start.Add(c.at), c.done); got != "fill" {
			t.Errorf("label %q before an estimate", got)
		}
	}
	for at := time.Second; at < 20*time.Second; at += 250 * time.Millisecond {
		exact := int64(at.Seconds() * rate)
		done := exact &^ 255 // the counter moves in steps of 256 ops
		d, ok := e.left(start.Add(at), done)
		if !ok {
			t.Fatalf("at %v: no ETA", at)
		}
		// Up to 255 uncounted ops put the estimate off by at most
		// elapsed·total·255/done², a bound that shrinks as the phase goes
		// on (a tenth of a second at 1 s, 5 ms near the end). Counted
		// exactly, the estimate is the time left.
		want := 20*time.Second - at
		bound := time.Duration(float64(at) * total * 255 / (float64(done) * float64(done)))
		if err := (d - want).Abs(); err > bound+time.Microsecond {
			t.Errorf("at %v: ETA %v, true time left %v: off by %v, more than %v", at, d, want, err, bound)
		}
		if d, _ := e.left(start.Add(at), exact); (d - want).Abs() > time.Microsecond {
			t.Errorf("at %v, counted exactly: ETA %v, true time left %v", at, d, want)
		}
	}
	if got := describe("fill", e, start.Add(5*time.Second), 250_000); got != "fill (ETA 15s)" {
		t.Errorf("label %q, want fill (ETA 15s)", got)
	}
	if d, ok := e.left(start.Add(21*time.Second), total); !ok || d != 0 {
		t.Errorf("done: ETA %v, %v", d, ok)
	}
}
