package raft_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	monbanraft "github.com/monbandb/monban/contrib/raft"
)

// A one-node cluster: the Store holds raft's log and stable state, the
// FSM the replicated map.
func Example() {
	dir, err := os.MkdirTemp("", "monbanraft")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := monbanraft.Open(filepath.Join(dir, "raft"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fsm, err := monbanraft.OpenFSM(filepath.Join(dir, "fsm"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer fsm.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "snapshots"), 2, hclog.NewNullLogger())
	if err != nil {
		log.Fatal(err)
	}
	addr, transport := raft.NewInmemTransport("")

	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.Logger = hclog.NewNullLogger()
	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Shutdown()
	if err := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: addr}}}).Error(); err != nil {
		log.Fatal(err)
	}

	for r.State() != raft.Leader { // the election
		time.Sleep(10 * time.Millisecond)
	}
	f := r.Apply(monbanraft.PutCommand([]byte("greeting"), []byte("hello")), 10*time.Second)
	if err := f.Error(); err != nil { // committed: in the log, synced, and applied
		log.Fatal(err)
	}
	v, err := fsm.Get([]byte("greeting"))
	fmt.Printf("%s %v\n", v, err)
	// Output: hello <nil>
}
