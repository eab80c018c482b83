package main

import (
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// MemReporter is optional: an engine that can say what it holds outside the
// Go heap names those parts (bytes by label), and -memsample breaks each
// phase's peak down by them.
type MemReporter interface {
	MemParts() []memPart
}

type memPart struct {
	label string
	bytes int64
}

// memSample is the process's memory at one instant, split the way the
// kernel and the Go runtime can each account for it: resident anonymous and
// file-backed pages (the binary's text, mapped files), and of the Go
// runtime's mappings the heap the last collection found live, the objects
// allocated since (garbage, mostly, until the next collection), the heap
// it holds free (resident until the scavenger returns it) and its own
// stacks and metadata. The collector lets the heap grow to about twice
// what it found live (GOGC=100), so a live byte costs about two.
type memSample struct {
	rss, anon, file                    int64
	goLive, goSince, goFree, goRuntime int64
	engine                             []memPart
}

var memMetrics = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/profiling/buckets:bytes",
}

func takeMemSample(e Engine, m []metrics.Sample) (memSample, error) {
	var s memSample
	var err error
	if s.rss, err = currentRSS(); err != nil {
		return s, err
	}
	if s.anon, err = procStatus("RssAnon"); err != nil {
		return s, err
	}
	if s.file, err = procStatus("RssFile"); err != nil {
		return s, err
	}
	metrics.Read(m)
	v := func(i int) int64 {
		if m[i].Value.Kind() != metrics.KindUint64 {
			return 0 // a class this Go version does not have
		}
		return int64(m[i].Value.Uint64())
	}
	s.goLive = v(0)
	s.goSince = max(v(1)-v(0), 0)
	s.goFree = v(2) + v(3)
	for i := 4; i < len(m); i++ {
		s.goRuntime += v(i)
	}
	if r, ok := e.(MemReporter); ok {
		s.engine = r.MemParts()
	}
	return s, nil
}

// String puts the kernel's view first; what the runtime and the engine
// account for is a part of anon, and the rest of anon is what neither
// counts (another allocator's, or pages the runtime maps but does not class).
func (s memSample) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rss=%s(anon=%s file=%s) go(live=%s since=%s free=%s runtime=%s)",
		fmtSize(s.rss), fmtSize(s.anon), fmtSize(s.file), fmtSize(s.goLive), fmtSize(s.goSince), fmtSize(s.goFree), fmtSize(s.goRuntime))
	for _, p := range s.engine {
		fmt.Fprintf(&b, " %s=%s", p.label, fmtSize(p.bytes))
	}
	return b.String()
}

// memSampler samples every interval until stopped and keeps the sample of
// highest RSS: VmHWM says how high a phase went, the sample says what was
// holding the memory at about that moment.
type memSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak memSample
	err  error
}

func startMemSampler(e Engine, every time.Duration) *memSampler {
	s := &memSampler{stop: make(chan struct{})}
	m := make([]metrics.Sample, len(memMetrics))
	for i, name := range memMetrics {
		m[i].Name = name
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			cur, err := takeMemSample(e, m)
			if err != nil {
				s.err = err
				return
			}
			if cur.rss > s.peak.rss {
				s.peak = cur
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// finish stops the sampler and returns the sample of highest RSS.
func (s *memSampler) finish() (memSample, error) {
	close(s.stop)
	s.done.Wait()
	return s.peak, s.err
}
