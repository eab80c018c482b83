package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	monbanraft "github.com/monbandb/monban/contrib/raft"
)

// config is one node's flags.
type config struct {
	httpAddr  string // also the node's raft server ID: peers find its HTTP API from it
	raftAddr  string // where raft's TCP transport listens
	dir       string // the node's state: raft/, fsm/, snapshots/
	bootstrap bool   // start a new one-node cluster
	join      string // the HTTP address of a member to ask to add this node
	logOutput io.Writer
}

// node is a raft server whose log, stable state and data are in monban.
type node struct {
	raft      *raft.Raft
	store     *monbanraft.Store
	fsm       *monbanraft.FSM
	transport *raft.NetworkTransport
}

func startNode(c config) (*node, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: c.httpAddr, Output: c.logOutput, Level: hclog.Info})
	n := &node{}
	var err error
	if n.store, err = monbanraft.Open(filepath.Join(c.dir, "raft"), nil); err != nil {
		return nil, err
	}
	if n.fsm, err = monbanraft.OpenFSM(filepath.Join(c.dir, "fsm"), nil); err != nil {
		return nil, errors.Join(err, n.store.Close())
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(c.dir, "snapshots"), 2, logger)
	if err == nil {
		n.transport, err = raft.NewTCPTransportWithLogger(c.raftAddr, nil, 3, 10*time.Second, logger)
	}
	if err != nil {
		return nil, errors.Join(err, n.close())
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(c.httpAddr)
	conf.Logger = logger
	// The FSM's state survives a restart (monbanraft.FSM.Snapshot syncs
	// it): no need to replace it with the last snapshot first, unless a
	// crash cut short the install of one a leader sent (CatchUp).
	conf.NoSnapshotRestoreOnStart = true
	if err := n.fsm.CatchUp(snaps, n.store); err != nil {
		return nil, errors.Join(err, n.close())
	}
	if n.raft, err = raft.NewRaft(conf, n.fsm, n.store, n.store, snaps, n.transport); err != nil {
		return nil, errors.Join(err, n.close())
	}
	if c.bootstrap {
		// A node with state of its own refuses with ErrCantBootstrap, and
		// that is as it should be on a restart: it rejoins its cluster.
		err := n.raft.BootstrapCluster(raft.Configuration{Servers: []raft.Server{
			{ID: conf.LocalID, Address: n.transport.LocalAddr()}}}).Error()
		if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return nil, errors.Join(err, n.close())
		}
	}
	return n, nil
}

// apply commits cmd, if this node leads.
func (n *node) apply(cmd []byte) error {
	f := n.raft.Apply(cmd, 10*time.Second)
	if err := f.Error(); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok {
		return err
	}
	return nil
}

// join adds a voter, if this node leads.
func (n *node) join(id, raftAddr string) error {
	return n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, 10*time.Second).Error()
}

func (n *node) close() error {
	var errs []error
	if n.raft != nil {
		errs = append(errs, n.raft.Shutdown().Error())
	}
	if n.transport != nil {
		errs = append(errs, n.transport.Close())
	}
	if n.fsm != nil {
		errs = append(errs, n.fsm.Close())
	}
	errs = append(errs, n.store.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raftkv: closing: %w", err)
	}
	return nil
}
