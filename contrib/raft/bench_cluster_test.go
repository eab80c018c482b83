package raft

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftwal "github.com/hashicorp/raft-wal"
)

// raftStore is what a cluster node keeps raft's log and stable state in.
type raftStore interface {
	hraft.LogStore
	hraft.StableStore
	io.Closer
}

var clusterStores = []struct {
	name string
	open func(dir string) (raftStore, error)
}{
	{"monban", func(dir string) (raftStore, error) { return Open(dir, nil) }},
	{"boltdb", func(dir string) (raftStore, error) { return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db")) }},
	{"wal", func(dir string) (raftStore, error) { return raftwal.Open(dir) }},
}

// BenchmarkCluster commits 128-byte puts from 16 concurrent clients to a
// 3-node cluster on loopback TCP, each node's log and stable state in the
// store named, its state in a monban FSM. It reports commits per second
// and the 99th percentile of a commit's latency.
func BenchmarkCluster(b *testing.B) {
	const clients = 16
	for _, st := range clusterStores {
		b.Run(st.name, func(b *testing.B) {
			nodes := startTCPCluster(b, st.open)
			value := make([]byte, 128)
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			b.ResetTimer()
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					for i := c; i < b.N; i += clients {
						start := time.Now()
						if err := applyRetrying(nodes, PutCommand(fmt.Appendf(nil, "k%d", i), value)); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// applyRetrying commits cmd through the leader, as a client would: on a
// shared machine a leader can lose its lease under load, and the commit
// then waits for the next one, its latency counted.
func applyRetrying(nodes []*hraft.Raft, cmd []byte) error {
	deadline := time.Now().Add(waitTimeout)
	for {
		var err error = hraft.ErrNotLeader
		for _, r := range nodes {
			if r.State() == hraft.Leader {
				err = r.Apply(cmd, 10*time.Second).Error()
				break
			}
		}
		if err == nil || (err != hraft.ErrNotLeader && err != hraft.ErrLeadershipLost) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// startTCPCluster starts 3 nodes on loopback TCP and waits for a leader.
func startTCPCluster(b *testing.B, open func(string) (raftStore, error)) []*hraft.Raft {
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Off})
	var nodes []*hraft.Raft
	var servers []hraft.Server
	var transports []*hraft.NetworkTransport
	for i := range 3 {
		tr, err := hraft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 16, 10*time.Second, logger)
		if err != nil {
			b.Fatal(err)
		}
		transports = append(transports, tr)
		servers = append(servers, hraft.Server{ID: hraft.ServerID(fmt.Sprint(i)), Address: tr.LocalAddr()})
	}
	for i, tr := range transports {
		dir := b.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "log"), 0o755); err != nil {
			b.Fatal(err)
		}
		store, err := open(filepath.Join(dir, "log"))
		if err != nil {
			b.Fatal(err)
		}
		fsm, err := OpenFSM(filepath.Join(dir, "fsm"), nil)
		if err != nil {
			b.Fatal(err)
		}
		conf := hraft.DefaultConfig()
		conf.LocalID = servers[i].ID
		conf.Logger = logger
		snaps := hraft.NewInmemSnapshotStore()
		// Into the stores before the node runs, as cluster_test.go does.
		if err := hraft.BootstrapCluster(conf, store, store, snaps, tr, hraft.Configuration{Servers: servers}); err != nil {
			b.Fatal(err)
		}
		r, err := hraft.NewRaft(conf, fsm, store, store, snaps, tr)
		if err != nil {
			b.Fatal(err)
		}
		nodes = append(nodes, r)
		b.Cleanup(func() {
			r.Shutdown().Error()
			tr.Close()
			store.Close()
			fsm.Close()
		})
	}
	if err := applyRetrying(nodes, PutCommand([]byte("warm-up"), nil)); err != nil {
		b.Fatal(err)
	}
	return nodes
}
