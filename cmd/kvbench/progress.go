package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressDelay is how long a phase runs before it earns a progress bar:
// short phases print nothing, so the common case stays quiet.
const progressDelay = 2 * time.Second

// progress draws a bar on stderr for a phase that outlasts progressDelay,
// and only when stderr is a terminal (never into a pipe, a file or a test
// buffer). The workers only bump an atomic counter; one goroutine samples
// it, so the bar costs the hot loop nothing.
type progress struct {
	quit chan struct{}
	done chan struct{}
}

func startProgress(stderr io.Writer, name string, total int64, count *atomic.Int64) *progress {
	f, ok := stderr.(*os.File)
	if !ok || !isTerminal(f) || total <= 0 {
		return nil
	}
	p := &progress{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		start := time.Now()
		est := eta{start: start, total: total}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		var bar *progressbar.ProgressBar
		for {
			select {
			case <-p.quit:
				if bar != nil {
					_ = bar.Clear()
				}
				return
			case <-tick.C:
			}
			if bar == nil && time.Since(start) >= progressDelay {
				bar = progressbar.NewOptions64(total,
					progressbar.OptionSetWriter(f),
					progressbar.OptionSetDescription(name),
					progressbar.OptionShowCount(),
					// The bar's own estimate starts its clock when the bar
					// appears, so it counts the work of the first
					// progressDelay as done in no time: eta's instead.
					progressbar.OptionSetPredictTime(false),
					progressbar.OptionSetWidth(30),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			if bar != nil {
				done := count.Load()
				bar.Describe(describe(name, est, time.Now(), done))
				_ = bar.Set64(done)
			}
		}
	}()
	return p
}

// stop removes the bar, if one was drawn. A nil progress is valid.
func (p *progress) stop() {
	if p != nil {
		close(p.quit)
		<-p.done
	}
}

// eta estimates the time a phase has left from its average rate since it
// began: at a constant rate the estimate is the true time left, up to the
// workers' counting in steps of 256 ops.
type eta struct {
	start time.Time
	total int64
}

// etaMinElapsed is how long a phase runs before its rate is taken to be
// known.
const etaMinElapsed = time.Second

// left returns the time left at now, with done of total ops done; ok is
// false while it cannot be estimated: before etaMinElapsed, or before the
// first ops are counted.
func (e eta) left(now time.Time, done int64) (d time.Duration, ok bool) {
	elapsed := now.Sub(e.start)
	if elapsed < etaMinElapsed || done <= 0 {
		return 0, false
	}
	if done >= e.total {
		return 0, true
	}
	return time.Duration(float64(elapsed) * float64(e.total-done) / float64(done)), true
}

// describe is the bar's label: the phase's name, and its ETA once known.
func describe(name string, e eta, now time.Time, done int64) string {
	d, ok := e.left(now, done)
	if !ok {
		return name
	}
	return fmt.Sprintf("%s (ETA %v)", name, d.Round(time.Second))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
