package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// testNode is a node with its HTTP API on an ephemeral loopback port.
type testNode struct {
	*node
	cfg config
	srv *http.Server
}

func startTestNode(t *testing.T, c config) *testNode {
	t.Helper()
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	c.httpAddr = ln.Addr().String()
	n, err := startNode(c)
	if err != nil {
		t.Fatal(err)
	}
	// A restart must come back on the same addresses: the cluster's
	// configuration holds them.
	c.raftAddr = string(n.transport.LocalAddr())
	tn := &testNode{node: n, cfg: c, srv: &http.Server{Handler: n.handler()}}
	go tn.srv.Serve(ln)
	if c.join != "" {
		if err := askToJoin(c.join, c.httpAddr, n.transport.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

func (tn *testNode) stop(t *testing.T) {
	tn.srv.Close()
	if err := tn.close(); err != nil {
		t.Fatal(err)
	}
}

// do sends a request and returns the status and body; status 0 for a
// request that got no answer (a redirect to a leader that just stopped).
func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// eventually waits for GET key on n to answer want.
func eventually(t *testing.T, n *testNode, key string, status int, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, got := do(t, "GET", "http://"+n.cfg.httpAddr+"/kv/"+key, "")
		if code == status && (status != http.StatusOK || got == want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s on %s: %d %q, want %d %q", key, n.cfg.httpAddr, code, got, status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCluster is README's walk-through: three nodes on loopback, a write
// through a follower, the leader stopped, a write through the survivors,
// and the old leader back from its directory with everything.
func TestCluster(t *testing.T) {
	dir := t.TempDir()
	base := config{httpAddr: "127.0.0.1:0", raftAddr: "127.0.0.1:0", logOutput: io.Discard}
	c1 := base
	c1.dir, c1.bootstrap = filepath.Join(dir, "n1"), true
	nodes := []*testNode{startTestNode(t, c1)}
	for _, name := range []string{"n2", "n3"} {
		c := base
		c.dir, c.join = filepath.Join(dir, name), nodes[0].cfg.httpAddr
		nodes = append(nodes, startTestNode(t, c))
	}
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.stop(t)
			}
		}
	}()
	// A follower that joined learns the leader at its first heartbeat;
	// until then it answers 503.
	write(t, "PUT", "http://"+nodes[2].cfg.httpAddr+"/kv/hello", "world")
	// A consistent read through a follower sees the write at once.
	if code, body := led(t, "GET", "http://"+nodes[1].cfg.httpAddr+"/kv/hello?consistent"); code != http.StatusOK || body != "world" {
		t.Fatalf("consistent GET through a follower: %d %q", code, body)
	}
	for _, n := range nodes {
		eventually(t, n, "hello", http.StatusOK, "world")
	}
	var leader int
	for i, n := range nodes {
		if n.raft.State() == raft.Leader {
			leader = i
		}
	}
	cfg := nodes[leader].cfg
	nodes[leader].stop(t)
	nodes[leader] = nil
	other := nodes[(leader+1)%3]
	// Until the survivors elect a leader, a write is refused or sent
	// to the stopped one.
	write(t, "PUT", "http://"+other.cfg.httpAddr+"/kv/after", "the leader stopped")
	write(t, "DELETE", "http://"+other.cfg.httpAddr+"/kv/hello", "")
	nodes[leader] = startTestNode(t, cfg)
	for _, n := range nodes {
		eventually(t, n, "after", http.StatusOK, "the leader stopped")
		eventually(t, n, "hello", http.StatusNotFound, "")
	}
}

// led makes a request again while the node knows no leader (503).
func led(t *testing.T, method, url string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := do(t, method, url, "")
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return code, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// write retries a PUT or DELETE until it is committed.
func write(t *testing.T, method, url, body string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, msg := do(t, method, url, body)
		if code == http.StatusNoContent {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %d %s", method, url, code, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAWriteWithoutALeaderIs503: a write whose leader lost its leadership
// before it committed, or was handing it over, answered 500, though the
// README promises 503 while there is no leader: both are an election's,
// and the client retries.
func TestAWriteWithoutALeaderIs503(t *testing.T) {
	var n node
	for _, err := range []error{raft.ErrLeadershipLost, raft.ErrLeadershipTransferInProgress} {
		rec := httptest.NewRecorder()
		n.reply(rec, httptest.NewRequest(http.MethodPut, "/kv/k", nil), err)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%v: %d, want %d", err, rec.Code, http.StatusServiceUnavailable)
		}
	}
}
