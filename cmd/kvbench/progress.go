package main

import (
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
					progressbar.OptionSetWidth(30),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			if bar != nil {
				_ = bar.Set64(count.Load())
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

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
