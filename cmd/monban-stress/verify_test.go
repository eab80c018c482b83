package main

import (
	"os"
	"strings"
	"testing"
)

// history is a fabricated cycle: writer 8 is this cycle's first (base 8),
// writer 0 an earlier cycle's. Key 0 was put and acknowledged; key 1 held
// a value from the earlier cycle and was deleted; key 2 was put twice; a
// batch over keys 3 and 4 was in flight at the kill; key 5 was never
// written.
func history() (base state, ops []*op) {
	base = state{1: value(1, 0, 7, 20), 2: value(2, 0, 9, 20)}
	ops = []*op{
		{writer: 8, seq: 1, entries: []entry{{key: 0, size: 30}}, done: true},
		{writer: 8, seq: 2, entries: []entry{{key: 1, del: true}}, done: true},
		{writer: 9, seq: 1, entries: []entry{{key: 2, size: 40}}, done: true},
		{writer: 9, seq: 2, entries: []entry{{key: 2, size: 50}}, done: true},
		{writer: 10, seq: 1, entries: []entry{{key: 3, size: 20}, {key: 4, del: true}}},
	}
	return base, ops
}

// survived is the DB after a kill that lost nothing, the batch not applied
// (key 4 keeps the base's absence, so only key 3 tells).
func survived() state {
	return state{0: value(0, 8, 1, 30), 2: value(2, 9, 2, 50)}
}

func TestVerifyAcceptsEveryAllowedOutcome(t *testing.T) {
	base, ops := history()
	for name, got := range map[string]state{
		"batch not applied": survived(),
		"batch applied":     with3(survived(), value(3, 10, 1, 20)),
	} {
		v, next := verify(base, ops, got, 6, 8)
		if !v.ok() || v.checked != 6 {
			t.Errorf("%s: %+v, want 6 keys checked and ok", name, v)
		}
		if len(next) != len(got) {
			t.Errorf("%s: next base has %d keys, want %d", name, len(next), len(got))
		}
	}
}

func with3(s state, v []byte) state { s[3] = v; return s }

// TestVerifyCatches fabricates DB states that break the durability model
// and checks the verifier fails each one, in the right column.
func TestVerifyCatches(t *testing.T) {
	base, ops := history()
	for _, tc := range []struct {
		name             string
		mutate           func(state)
		lost, unexpected int
		says             string
	}{
		{"acknowledged put gone", func(s state) { delete(s, 0) }, 1, 0, "key 0: absent"},
		{"overwrite lost", func(s state) { s[2] = value(2, 9, 1, 40) }, 1, 0, "earlier value of w9.s1"},
		{"older cycle's value back", func(s state) { s[2] = value(2, 0, 9, 20) }, 1, 0, "earlier value of w0.s9"},
		{"deleted key back", func(s state) { s[1] = value(1, 0, 7, 20) }, 1, 0, "key 1: shows earlier"},
		{"never written key", func(s state) { s[5] = value(5, 8, 1, 30) }, 0, 1, "key 5: shows value of w8.s1"},
		{"another key's value", func(s state) { s[0] = value(2, 9, 2, 50) }, 0, 1, "which no write put there"},
		{"value cut short", func(s state) { s[0] = s[0][:25] }, 0, 1, "key 0"},
		{"garbage", func(s state) { s[2] = []byte("garbage") }, 0, 1, `"garbage"`},
	} {
		got := survived()
		tc.mutate(got)
		v, _ := verify(base, ops, got, 6, 8)
		if v.lost != tc.lost || v.unexpected != tc.unexpected {
			t.Errorf("%s: lost %d, unexpected %d; want %d, %d (%q)", tc.name, v.lost, v.unexpected, tc.lost, tc.unexpected, v.problems)
		}
		if !strings.Contains(strings.Join(v.problems, "\n"), tc.says) {
			t.Errorf("%s: problems %q do not say %q", tc.name, v.problems, tc.says)
		}
	}
}

// TestVerifyCatchesPartialBatch: an in-flight batch that shows on one key
// and not on another was not atomic.
func TestVerifyCatchesPartialBatch(t *testing.T) {
	base := state{4: value(4, 0, 1, 20)}
	ops := []*op{{writer: 8, seq: 1, entries: []entry{{key: 3, size: 20}, {key: 4, del: true}}}}
	v, _ := verify(base, ops, state{3: value(3, 8, 1, 20), 4: value(4, 0, 1, 20)}, 6, 8)
	if v.unexpected != 1 || !strings.Contains(strings.Join(v.problems, "\n"), "applied to 1 of its keys and not to 1") {
		t.Errorf("partial batch: %+v", v)
	}
}

func TestAckLogRoundTrip(t *testing.T) {
	path := t.TempDir() + "/ack.log"
	l, err := openAckLog(path)
	if err != nil {
		t.Fatal(err)
	}
	_, ops := history()
	for _, o := range ops {
		if err := l.started(o); err != nil {
			t.Fatal(err)
		}
		if o.done {
			if err := l.done(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	l.f.WriteString("D 10 1") // the kill cut the ack short: still in flight
	l.f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAckLog(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ops) {
		t.Fatalf("read %d ops, wrote %d", len(got), len(ops))
	}
	for i, o := range ops {
		if g := got[i]; g.writer != o.writer || g.seq != o.seq || g.done != o.done || len(g.entries) != len(o.entries) {
			t.Errorf("op %d: read %+v, wrote %+v", i, g, o)
		}
	}
	if _, err := readAckLog([]byte("D 1 1\n")); err == nil {
		t.Error("an ack of an op never started parsed")
	}
}

func TestParseValue(t *testing.T) {
	v := value(17, 5, 99, 64)
	if w, s, ok := parseValue(17, v); !ok || w != 5 || s != 99 || len(v) != 64 {
		t.Errorf("parseValue(value(17, 5, 99, 64)) = %d, %d, %v", w, s, ok)
	}
	if _, _, ok := parseValue(18, v); ok {
		t.Error("a value parsed under another key")
	}
	if short := value(1, 2, 3, 0); len(short) != len("1.2.3.") {
		t.Errorf("value of size 0 is %q, want just its prefix", short)
	}
}
