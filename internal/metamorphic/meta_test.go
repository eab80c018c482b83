package metamorphic

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMetamorphic runs seeds' operation sequences against every
// configuration and compares the outcomes (doc.go: invariants 1 and 2).
// MONBAN_META_RUNS seeds of MONBAN_META_OPS operations each; MONBAN_SEED
// is the first seed (default random).
func TestMetamorphic(t *testing.T) {
	runs := envInt(t, "MONBAN_META_RUNS", 1)
	nops := envInt(t, "MONBAN_META_OPS", 1000)
	seed := rand.Uint64()
	if s := os.Getenv("MONBAN_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("MONBAN_SEED=%q: want an unsigned integer", s)
		}
	}
	start := time.Now()
	var ncfg int
	for i := range runs {
		ncfg = runSeed(t, seed+uint64(i), nops)
		if t.Failed() {
			return
		}
	}
	t.Logf("seeds %d..%d: %d runs × %d configurations × %d operations in %v",
		seed, seed+uint64(runs)-1, runs, ncfg, nops, time.Since(start).Round(time.Millisecond))
}

// runSeed runs one seed against every configuration and fails t at the
// first operation whose outcomes differ. It returns the number of
// configurations.
func runSeed(t *testing.T, seed uint64, nops int) int {
	t.Helper()
	ops := generate(seed, nops)
	cfgs := configs(seed)
	outcomes := make([][]string, len(cfgs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			outcomes[c] = runConfig(cfg, ops)
		}()
	}
	wg.Wait()
	m := newModel()
	replay := fmt.Sprintf("replay: MONBAN_SEED=%d MONBAN_META_OPS=%d go test -run TestMetamorphic ./internal/metamorphic", seed, nops)
	for i, o := range ops {
		want := m.apply(o)
		for c := 1; c < len(cfgs); c++ {
			if outcomes[c][i] != outcomes[0][i] {
				t.Fatalf("seed %d op %d %s: configurations differ\n  %s: %s\n  %s: %s\n  model: %s\n%s\n%s",
					seed, i, o, cfgs[0].name, showDiff(outcomes[0][i], outcomes[c][i]), cfgs[c].name, showDiff(outcomes[c][i], outcomes[0][i]),
					showDiff(want, outcomes[0][i]), context(ops, i), replay)
			}
		}
		if outcomes[0][i] != want {
			t.Fatalf("seed %d op %d %s: every configuration gives\n  %s\nthe model gives\n  %s\n%s\n%s",
				seed, i, o, showDiff(outcomes[0][i], want), showDiff(want, outcomes[0][i]), context(ops, i), replay)
		}
	}
	return len(cfgs)
}

// runConfig applies ops to a fresh DB with cfg's options and returns each
// operation's outcome.
func runConfig(cfg config, ops []op) []string {
	out := make([]string, len(ops))
	r, err := newRunner(cfg)
	if err != nil {
		for i := range out {
			out[i] = "Open: " + errOutcome(err)
		}
		return out
	}
	for i, o := range ops {
		out[i] = r.apply(o)
	}
	if err := r.close(); err != nil && len(out) > 0 {
		out[len(out)-1] += "; final Close: " + errOutcome(err)
	}
	return out
}

// context lists the operations leading to op i.
func context(ops []op, i int) string {
	var b strings.Builder
	b.WriteString("preceding operations:")
	for j := max(0, i-10); j < i; j++ {
		fmt.Fprintf(&b, "\n  %d %s", j, ops[j])
	}
	return b.String()
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}
