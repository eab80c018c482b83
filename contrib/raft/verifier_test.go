package raft

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/metrics"
	"github.com/hashicorp/raft-wal/verifier"
	"github.com/monbandb/monban/lsm"
)

// checkpointCmd is the command the verifier test's leader appends every
// so often: a put the FSM applies like any other, which the verifier
// recognises and stamps with the leader's checksum of the entries before
// it. Each node, on storing it, reads those entries back from its Store
// and compares.
var checkpointCmd = PutCommand([]byte("verifier checkpoint"), nil)

// TestClusterVerifier wraps every node's Store in raft-wal's verifier and
// writes through two leader crashes: every node must report ranges whose
// entries read back with the leader's checksums, and none a mismatch.
func TestClusterVerifier(t *testing.T) {
	rounds := 3
	if long() {
		rounds = 10
	}
	var mu sync.Mutex
	verified := map[hraft.ServerID]int{}
	var failures []string
	report := func(id hraft.ServerID, r verifier.VerificationReport) {
		mu.Lock()
		defer mu.Unlock()
		var mismatch verifier.ErrChecksumMismatch
		switch {
		case r.Err == nil:
			verified[id]++
		case errors.As(r.Err, &mismatch):
			failures = append(failures, fmt.Sprintf("%s %v: %v", id, r.Range, r.Err))
		case errors.Is(r.Err, verifier.ErrRangeMismatch), errors.Is(r.Err, lsm.ErrClosed):
			// A node that restarted holds no checksum of what it wrote
			// before, or was stopped while verifying: nothing to compare.
		default:
			failures = append(failures, fmt.Sprintf("%s %v: %v", id, r.Range, r.Err))
		}
	}
	c := newClusterWith(t, 3, nil, func(nd *node) interface {
		hraft.LogStore
		Close() error
	} {
		isCheckpoint := func(l *hraft.Log) (bool, error) {
			return l.Type == hraft.LogCommand && bytes.Equal(l.Data, checkpointCmd), nil
		}
		return verifier.NewLogStore(nd.store, isCheckpoint, func(r verifier.VerificationReport) { report(nd.id, r) },
			&metrics.NoOpCollector{})
	})
	want := map[string]string{}
	for r := range rounds {
		for i := range 40 {
			k := fmt.Sprintf("r%d-k%d", r, i)
			c.apply(PutCommand([]byte(k), []byte("v")))
			want[k] = "v"
			if i%10 == 9 {
				c.apply(checkpointCmd)
			}
		}
		want["verifier checkpoint"] = ""
		old := c.leader()
		c.stop(old)
		c.apply(checkpointCmd)
		c.start(old)
		c.converge(want)
	}
	c.apply(checkpointCmd)
	waitFor(t, "a verified range on every node", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(verified) == len(c.nodes) || len(failures) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("verifier reports:\n%s", failures)
	}
	t.Logf("ranges verified: %v", verified)
}
