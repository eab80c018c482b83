package main

import (
	"os"
	"strings"
	"testing"
)

// historyLog is a fabricated cycle's ack log: writer 8 is this cycle's
// first (base 8), writer 0 an earlier cycle's. Key 0 was put and
// acknowledged; key 1 held a value from the earlier cycle and was deleted;
// key 2 was put twice; a batch over keys 3 and 4 was in flight at the
// kill; key 5 was never written.
const historyLog = `S 8 1 p0:30
D 8 1
S 8 2 d1
D 8 2
S 9 1 p2:40
D 9 1
S 9 2 p2:50
D 9 2
S 10 1 p3:20 d4
`

func history(t *testing.T) (base state, ops []*op) {
	t.Helper()
	ops, _, err := readAckLog([]byte(historyLog))
	if err != nil {
		t.Fatal(err)
	}
	return state{1: value(1, 0, 7, 20), 2: value(2, 0, 9, 20)}, ops
}

// survived is the DB after a kill that lost nothing, the batch not applied
// (key 4 keeps the base's absence, so only key 3 tells).
func survived() state {
	return state{0: value(0, 8, 1, 30), 2: value(2, 9, 2, 50)}
}

func TestVerifyAcceptsEveryAllowedOutcome(t *testing.T) {
	base, ops := history(t)
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
	base, ops := history(t)
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
	_, ops := history(t)
	for _, o := range ops {
		if err := l.started(o); err != nil {
			t.Fatal(err)
		}
		if o.acked > 0 {
			if err := l.done(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	l.checkpointStarted(1, "3-1")
	l.checkpointDone(1)
	l.checkpointStarted(2, "3-2")
	l.f.WriteString("K 2") // the kill cut the checkpoint's end short: cut short
	l.f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), historyLog) {
		t.Fatalf("wrote\n%s\nwant it to begin with the log it was read from\n%s", data, historyLog)
	}
	got, ckpts, err := readAckLog(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ops) {
		t.Fatalf("read %d ops, wrote %d", len(got), len(ops))
	}
	for i, o := range ops {
		if g := got[i]; g.writer != o.writer || g.seq != o.seq || g.started != o.started || g.acked != o.acked || len(g.entries) != len(o.entries) {
			t.Errorf("op %d: read %+v, wrote %+v", i, g, o)
		}
	}
	want := []checkpoint{{id: 1, name: "3-1", started: 10, done: 11}, {id: 2, name: "3-2", started: 12}}
	if len(ckpts) != len(want) || *ckpts[0] != want[0] || *ckpts[1] != want[1] {
		t.Errorf("checkpoints read: %+v %+v, want %+v", ckpts[0], ckpts[1], want)
	}
	for _, bad := range []string{"D 1 1\n", "K 1\n", "C 1 a\nK 1\nK 1\n", "S 1 1\nD 1 1\nD 1 1\n"} {
		if _, _, err := readAckLog([]byte(bad)); err == nil {
			t.Errorf("%q parsed: an end of what never started, or ended twice", bad)
		}
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

// checkpointLog is a fabricated cycle's ack log with checkpoint 1 taken
// while writes went on (base 8 again, key 1 and key 5 holding values of an
// earlier cycle at its start). Before the "C" line, key 0 was put and key
// 2 overwritten, both acknowledged, and a put on key 1 started; between
// the "C" and "K" lines that put was acknowledged and a batch over keys 3
// and 5 and a second put on key 1 started; after the "K" line, key 0 was
// overwritten and key 2 deleted. The put on key 1 and the batch on key 3
// and 5 are in the window, the writes after "K" are not.
const checkpointLog = `S 8 1 p0:30
D 8 1
S 8 2 p2:40
D 8 2
S 9 1 p1:25
C 1 4-1
D 9 1
S 8 3 p3:20 d5
S 9 2 p1:35
K 1
D 8 3
D 9 2
S 8 4 p0:50
D 8 4
S 9 3 d2
D 9 3
`

func checkpointHistory(t *testing.T) (base state, ops []*op, ck *checkpoint) {
	t.Helper()
	ops, ckpts, err := readAckLog([]byte(checkpointLog))
	if err != nil || len(ckpts) != 1 {
		t.Fatalf("%d checkpoints, %v", len(ckpts), err)
	}
	return state{1: value(1, 0, 7, 20), 2: value(2, 0, 9, 20), 5: value(5, 0, 3, 20)}, ops, ckpts[0]
}

// atStart is checkpoint 1 holding none of its window.
func atStart() state {
	return state{0: value(0, 8, 1, 30), 1: value(1, 0, 7, 20), 2: value(2, 8, 2, 40), 5: value(5, 0, 3, 20)}
}

func TestVerifyCheckpointAcceptsEveryInstantOfItsWindow(t *testing.T) {
	base, ops, ck := checkpointHistory(t)
	for name, mutate := range map[string]func(state){
		"at the start":           func(state) {},
		"first put on key 1":     func(s state) { s[1] = value(1, 9, 1, 25) },
		"both puts on key 1":     func(s state) { s[1] = value(1, 9, 2, 35) },
		"batch":                  func(s state) { s[3] = value(3, 8, 3, 20); delete(s, 5) },
		"batch and a put on key": func(s state) { s[3] = value(3, 8, 3, 20); delete(s, 5); s[1] = value(1, 9, 1, 25) },
	} {
		got := atStart()
		mutate(got)
		if v := verifyCheckpoint(base, ops, ck, got, 6, 8); !v.ok() || v.checked != 6 {
			t.Errorf("%s: %+v, want 6 keys checked and ok", name, v)
		}
	}
}

// TestVerifyCheckpointCatches fabricates checkpoints that hold no state of
// their window and checks the verifier fails each one, in the right
// column.
func TestVerifyCheckpointCatches(t *testing.T) {
	base, ops, ck := checkpointHistory(t)
	for _, tc := range []struct {
		name             string
		mutate           func(state)
		lost, unexpected int
		says             string
	}{
		{"value overwritten before the start", func(s state) { s[2] = value(2, 0, 9, 20) }, 1, 0, "key 2: shows earlier value of w0.s9"},
		{"value written after the end", func(s state) { s[0] = value(0, 8, 4, 50) }, 0, 1, "key 0: shows value of w8.s4"},
		{"delete after the end", func(s state) { delete(s, 2) }, 1, 0, "key 2: absent"},
		{"put acknowledged before the start missing", func(s state) { delete(s, 0) }, 1, 0, "key 0: absent"},
		{"half a batch", func(s state) { s[3] = value(3, 8, 3, 20) }, 0, 1, "batch w8.s3 in flight during checkpoint 1 applied to 1 of its keys and not to 1"},
		{"other half of a batch", func(s state) { delete(s, 5) }, 0, 1, "batch w8.s3 in flight during checkpoint 1 applied to 1 of its keys and not to 1"},
	} {
		got := atStart()
		tc.mutate(got)
		v := verifyCheckpoint(base, ops, ck, got, 6, 8)
		if v.lost != tc.lost || v.unexpected != tc.unexpected {
			t.Errorf("%s: lost %d, unexpected %d; want %d, %d (%q)", tc.name, v.lost, v.unexpected, tc.lost, tc.unexpected, v.problems)
		}
		if !strings.Contains(strings.Join(v.problems, "\n"), tc.says) {
			t.Errorf("%s: problems %q do not say %q", tc.name, v.problems, tc.says)
		}
	}
}

// TestVerifyCheckpointCutShort: a checkpoint the kill cut short, once
// complete, may hold any write started before the kill, but still none
// acknowledged-overwritten before its start.
func TestVerifyCheckpointCutShort(t *testing.T) {
	base, ops, ck := checkpointHistory(t)
	ck.done = 0
	got := atStart()
	got[0], got[2] = value(0, 8, 4, 50), nil
	if v := verifyCheckpoint(base, ops, ck, got, 6, 8); !v.ok() {
		t.Errorf("writes after the start, cut short: %q", v.problems)
	}
	got[2] = value(2, 0, 9, 20)
	if v := verifyCheckpoint(base, ops, ck, got, 6, 8); v.lost != 1 {
		t.Errorf("value overwritten before the start, cut short: %+v", v)
	}
}
