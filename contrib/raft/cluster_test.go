package raft

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"
)

// long reports whether the long forms of the cluster tests run
// (MONBAN_RAFT_LONG=1): more nodes, entries and rounds.
func long() bool { return os.Getenv("MONBAN_RAFT_LONG") == "1" }

// waitTimeout bounds every wait for the cluster: elections and catching
// up take milliseconds, but a shared 2-core machine under -race can stall
// a goroutine for seconds.
const waitTimeout = 30 * time.Second

// node is one server of an in-process cluster: its directories survive
// stop and start, as a machine's disk survives a crash of its process.
type node struct {
	id    hraft.ServerID
	dir   string
	store *Store
	// logs is what raft is given as its LogStore: the store, or a
	// verifier around it, whose Close closes the store too.
	logs interface {
		hraft.LogStore
		Close() error
	}
	fsm   *FSM
	trans *hraft.InmemTransport
	raft  *hraft.Raft
	// bootstrapped is set once the node's stores hold the bootstrap
	// configuration.
	bootstrapped bool
}

type cluster struct {
	t     *testing.T
	nodes []*node
	conf  func(*hraft.Config)
	// servers is the configuration every node is bootstrapped with.
	servers []hraft.Server
	// wrap, if not nil, wraps each node's Store in the LogStore raft uses.
	wrap func(*node) interface {
		hraft.LogStore
		Close() error
	}
}

// newCluster starts n bootstrapped nodes on raft's in-memory transport,
// each with a Store and an FSM in its own directory. conf, if not nil,
// adjusts each node's configuration.
func newCluster(t *testing.T, n int, conf func(*hraft.Config)) *cluster {
	return newClusterWith(t, n, conf, nil)
}

// newClusterWith is newCluster with each node's Store wrapped by wrap.
func newClusterWith(t *testing.T, n int, conf func(*hraft.Config), wrap func(*node) interface {
	hraft.LogStore
	Close() error
}) *cluster {
	c := &cluster{t: t, conf: conf, wrap: wrap}
	root := t.TempDir()
	for i := range n {
		c.nodes = append(c.nodes, &node{id: hraft.ServerID(fmt.Sprintf("n%d", i)), dir: filepath.Join(root, fmt.Sprintf("n%d", i))})
	}
	for _, nd := range c.nodes {
		c.servers = append(c.servers, hraft.Server{ID: nd.id, Address: hraft.ServerAddress(nd.id)})
	}
	for i := range c.nodes {
		c.start(i)
	}
	t.Cleanup(func() {
		for i, nd := range c.nodes {
			if nd.raft != nil {
				c.stop(i)
			}
		}
	})
	return c
}

// start opens node i from its directories and joins it to the running
// nodes' transports.
func (c *cluster) start(i int) {
	t, nd := c.t, c.nodes[i]
	var err error
	if nd.store, err = Open(filepath.Join(nd.dir, "log"), nil); err != nil {
		t.Fatal(err)
	}
	nd.logs = nd.store
	if c.wrap != nil {
		nd.logs = c.wrap(nd)
	}
	if nd.fsm, err = OpenFSM(filepath.Join(nd.dir, "fsm"), nil); err != nil {
		t.Fatal(err)
	}
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Off})
	snaps, err := hraft.NewFileSnapshotStoreWithLogger(filepath.Join(nd.dir, "snapshots"), 2, logger)
	if err != nil {
		t.Fatal(err)
	}
	_, nd.trans = hraft.NewInmemTransport(hraft.ServerAddress(nd.id))
	for _, peer := range c.nodes {
		if peer != nd && peer.raft != nil {
			nd.trans.Connect(hraft.ServerAddress(peer.id), peer.trans)
			peer.trans.Connect(hraft.ServerAddress(nd.id), nd.trans)
		}
	}
	conf := hraft.DefaultConfig()
	conf.LocalID = nd.id
	conf.HeartbeatTimeout = 100 * time.Millisecond
	conf.ElectionTimeout = 100 * time.Millisecond
	conf.LeaderLeaseTimeout = 100 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.Logger = logger
	if c.conf != nil {
		c.conf(conf)
	}
	if !nd.bootstrapped {
		// Into the stores, before the node runs: bootstrapping a running
		// node races with a peer's vote request, which gives it state.
		if err := hraft.BootstrapCluster(conf, nd.logs, nd.store, snaps, nd.trans, hraft.Configuration{Servers: c.servers}); err != nil {
			t.Fatal(err)
		}
		nd.bootstrapped = true
	}
	if conf.NoSnapshotRestoreOnStart {
		if err := nd.fsm.CatchUp(snaps, nd.logs); err != nil {
			t.Fatal(err)
		}
	}
	if nd.raft, err = hraft.NewRaft(conf, nd.fsm, nd.logs, nd.store, snaps, nd.trans); err != nil {
		t.Fatal(err)
	}
}

// stop shuts node i down and closes its stores: a crash of its process,
// less the loss of unsynced writes (the machine-crash tests cover those).
func (c *cluster) stop(i int) {
	nd := c.nodes[i]
	if err := nd.raft.Shutdown().Error(); err != nil {
		c.t.Fatal(err)
	}
	for _, peer := range c.nodes {
		if peer != nd && peer.raft != nil {
			peer.trans.Disconnect(hraft.ServerAddress(nd.id))
		}
	}
	nd.trans.Close()
	if err := errors.Join(nd.logs.Close(), nd.fsm.Close()); err != nil {
		c.t.Fatal(err)
	}
	nd.raft = nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leader waits for a running node to lead and returns its number.
func (c *cluster) leader() int {
	c.t.Helper()
	l := -1
	waitFor(c.t, "a leader", func() bool {
		for i, nd := range c.nodes {
			if nd.raft != nil && nd.raft.State() == hraft.Leader {
				l = i
				return true
			}
		}
		return false
	})
	return l
}

// apply commits cmd through whichever node leads, retrying across
// leader changes, and returns the response.
func (c *cluster) apply(cmd []byte) {
	c.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		f := c.nodes[c.leader()].raft.Apply(cmd, 5*time.Second)
		err := f.Error()
		if err == nil {
			if r := f.Response(); r != nil {
				c.t.Fatalf("response %v", r)
			}
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("apply: %v", err)
		}
	}
}

// converge waits for every running node's FSM to hold want.
func (c *cluster) converge(want map[string]string) {
	c.t.Helper()
	for _, nd := range c.nodes {
		if nd.raft == nil {
			continue
		}
		waitFor(c.t, fmt.Sprintf("%s to hold the %d keys written", nd.id, len(want)), func() bool {
			return maps.Equal(state(c.t, nd.fsm), want)
		})
	}
}

// checkLogsMatch checks raft's log matching property on the stores: where
// two running nodes both hold an index, they hold the same entry.
func (c *cluster) checkLogsMatch() {
	c.t.Helper()
	ref := c.nodes[c.leader()]
	first, _ := ref.store.FirstIndex()
	last, _ := ref.store.LastIndex()
	for _, nd := range c.nodes {
		if nd == ref || nd.raft == nil {
			continue
		}
		f, _ := nd.store.FirstIndex()
		l, _ := nd.store.LastIndex()
		for i := max(first, f); i <= min(last, l); i++ {
			var a, b hraft.Log
			if err := errors.Join(ref.store.GetLog(i, &a), nd.store.GetLog(i, &b)); err != nil {
				c.t.Fatalf("index %d: %v", i, err)
			}
			if a.Term != b.Term || a.Type != b.Type || string(a.Data) != string(b.Data) {
				c.t.Fatalf("index %d: %s holds term %d %q, %s term %d %q", i, ref.id, a.Term, a.Data, nd.id, b.Term, b.Data)
			}
		}
	}
}

// TestClusterLeaderRestart crashes the leader, writes through the new
// one, restarts the old leader from its directories, and checks that
// every node ends with every write and that their logs agree.
func TestClusterLeaderRestart(t *testing.T) {
	n, rounds, perRound := 3, 2, 30
	if long() {
		n, rounds, perRound = 5, 10, 200
	}
	c := newCluster(t, n, nil)
	want := map[string]string{}
	put := func(k, v string) {
		c.apply(PutCommand([]byte(k), []byte(v)))
		want[k] = v
	}
	for r := range rounds {
		for i := range perRound {
			put(fmt.Sprintf("r%d-k%d", r, i%(perRound/2)), fmt.Sprintf("round %d write %d", r, i))
		}
		c.apply(DeleteCommand([]byte(fmt.Sprintf("r%d-k0", r))))
		delete(want, fmt.Sprintf("r%d-k0", r))
		old := c.leader()
		lastBefore, _ := c.nodes[old].store.LastIndex()
		c.stop(old)
		for i := range perRound / 2 {
			put(fmt.Sprintf("r%d-after-%d", r, i), "written while the old leader was down")
		}
		c.start(old)
		if last, _ := c.nodes[old].store.LastIndex(); last < lastBefore {
			t.Fatalf("round %d: %s reopened with last index %d, had %d", r, c.nodes[old].id, last, lastBefore)
		}
		c.converge(want)
		c.checkLogsMatch()
	}
}

// TestClusterSnapshotCatchUp stops a follower, writes until the leader
// has truncated its log past the follower's last entry, and restarts the
// follower: it can only catch up from a snapshot, which its FSM restores.
func TestClusterSnapshotCatchUp(t *testing.T) {
	writes := 200
	if long() {
		writes = 3000
	}
	c := newCluster(t, 3, func(conf *hraft.Config) {
		conf.TrailingLogs = 16
		conf.SnapshotThreshold = 64
		conf.SnapshotInterval = 50 * time.Millisecond
	})
	want := map[string]string{}
	c.apply(PutCommand([]byte("first"), []byte("before the follower stopped")))
	want["first"] = "before the follower stopped"
	l := c.leader()
	f := (l + 1) % 3
	c.converge(want)
	behind, _ := c.nodes[f].store.LastIndex()
	c.stop(f)
	liveBefore := c.nodes[f].fsm.live
	for i := range writes {
		k := fmt.Sprintf("k%d", i%50)
		c.apply(PutCommand([]byte(k), []byte(fmt.Sprint(i))))
		want[k] = fmt.Sprint(i)
	}
	l = c.leader()
	waitFor(t, "the leader to truncate its log past the stopped follower", func() bool {
		if err := c.nodes[l].raft.Snapshot().Error(); err != nil && !errors.Is(err, hraft.ErrNothingNewToSnapshot) {
			t.Fatal(err)
		}
		first, _ := c.nodes[l].store.FirstIndex()
		return first > behind+1
	})
	c.start(f)
	// One write after the follower is back, so that its log holds
	// something: installing the snapshot emptied it.
	c.apply(PutCommand([]byte("last"), []byte("after the follower restarted")))
	want["last"] = "after the follower restarted"
	c.converge(want)
	nd := c.nodes[f]
	if first, _ := nd.store.FirstIndex(); first <= behind+1 {
		t.Fatalf("%s's log starts at %d, it had up to %d: no snapshot replaced it", nd.id, first, behind)
	}
	if nd.fsm.live == liveBefore {
		t.Fatalf("%s's FSM is still data-%06d: it restored no snapshot", nd.id, liveBefore)
	}
	c.checkLogsMatch()
}

// isolate cuts node i off from every other node, both ways; heal joins
// it again.
func (c *cluster) isolate(i int) {
	nd := c.nodes[i]
	nd.trans.DisconnectAll()
	for _, peer := range c.nodes {
		if peer != nd && peer.raft != nil {
			peer.trans.Disconnect(hraft.ServerAddress(nd.id))
		}
	}
}

func (c *cluster) heal(i int) {
	nd := c.nodes[i]
	for _, peer := range c.nodes {
		if peer != nd && peer.raft != nil {
			nd.trans.Connect(hraft.ServerAddress(peer.id), peer.trans)
			peer.trans.Connect(hraft.ServerAddress(nd.id), nd.trans)
		}
	}
}

// TestClusterPartitionedLeader isolates the leader, lets it append
// entries no one else will have while the majority elects another leader
// and commits, then heals the partition: the old leader must drop its
// uncommitted suffix (DeleteRange of a suffix, then StoreLogs over it)
// and end with exactly the majority's writes.
func TestClusterPartitionedLeader(t *testing.T) {
	n := 3
	if long() {
		n = 5
	}
	c := newCluster(t, n, nil)
	want := map[string]string{}
	for i := range 20 {
		k := fmt.Sprintf("k%d", i)
		c.apply(PutCommand([]byte(k), []byte("before the partition")))
		want[k] = "before the partition"
	}
	c.converge(want)
	old := c.leader()
	c.isolate(old)
	// Appended to the old leader's log only: they never commit.
	var lost []hraft.ApplyFuture
	for i := range 5 {
		lost = append(lost, c.nodes[old].raft.Apply(PutCommand([]byte(fmt.Sprintf("lost%d", i)), []byte("x")), 100*time.Millisecond))
	}
	for _, f := range lost {
		if err := f.Error(); err == nil {
			t.Fatal("an isolated leader committed an entry")
		}
	}
	// The indexes of the lost entries in the old leader's log.
	var lostAt []uint64
	last, _ := c.nodes[old].store.LastIndex()
	for i := last; i > 0 && len(lostAt) < len(lost); i-- {
		var e hraft.Log
		if err := c.nodes[old].store.GetLog(i, &e); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(e.Data, []byte("lost")) {
			lostAt = append(lostAt, i)
		}
	}
	if len(lostAt) != len(lost) {
		t.Fatalf("the isolated leader's log holds %d of its %d entries", len(lostAt), len(lost))
	}
	var newLeader int
	waitFor(t, "a leader among the majority", func() bool {
		for i, nd := range c.nodes {
			if i != old && nd.raft.State() == hraft.Leader {
				newLeader = i
				return true
			}
		}
		return false
	})
	for i := range 20 {
		k := fmt.Sprintf("k%d", i)
		f := c.nodes[newLeader].raft.Apply(PutCommand([]byte(k), []byte("during the partition")), 5*time.Second)
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		want[k] = "during the partition"
	}
	c.heal(old)
	c.converge(want)
	// Where the lost entries were, the old leader's log now holds the new
	// leader's: raft deleted the suffix and stored over it.
	for _, i := range lostAt {
		var e hraft.Log
		if err := c.nodes[old].store.GetLog(i, &e); err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
		if bytes.Contains(e.Data, []byte("lost")) {
			t.Fatalf("index %d still holds the isolated leader's entry %q", i, e.Data)
		}
	}
	c.checkLogsMatch()
}

// TestClusterRestartWithoutRestore runs raft with NoSnapshotRestoreOnStart:
// a node restarted after a snapshot keeps its FSM's state (no Restore)
// and raft replays only the entries after the snapshot over it.
func TestClusterRestartWithoutRestore(t *testing.T) {
	c := newCluster(t, 3, func(conf *hraft.Config) { conf.NoSnapshotRestoreOnStart = true })
	want := map[string]string{}
	for i := range 60 {
		k := fmt.Sprintf("k%d", i%20)
		c.apply(PutCommand([]byte(k), []byte(fmt.Sprint(i))))
		want[k] = fmt.Sprint(i)
	}
	c.converge(want)
	f := (c.leader() + 1) % 3
	if err := c.nodes[f].raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		k := fmt.Sprintf("after%d", i)
		c.apply(PutCommand([]byte(k), []byte("after the snapshot")))
		want[k] = "after the snapshot"
	}
	c.converge(want)
	live := c.nodes[f].fsm.live
	c.stop(f)
	c.start(f)
	c.apply(PutCommand([]byte("last"), []byte("after the restart")))
	want["last"] = "after the restart"
	c.converge(want)
	if got := c.nodes[f].fsm.live; got != live {
		t.Fatalf("%s's FSM went from data-%06d to data-%06d: it was restored", c.nodes[f].id, live, got)
	}
}
