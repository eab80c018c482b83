// Command raftkv is a replicated key-value store: hashicorp/raft over TCP,
// its log, stable state and data in monban (contrib/raft), and a small
// HTTP API. README.md starts a 3-node cluster on loopback.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var c config
	flag.StringVar(&c.httpAddr, "http", "127.0.0.1:8001", "HTTP API address, also the node's raft ID")
	flag.StringVar(&c.raftAddr, "raft", "127.0.0.1:9001", "raft TCP address")
	flag.StringVar(&c.dir, "dir", "raftkv-data", "directory of the node's state")
	flag.BoolVar(&c.bootstrap, "bootstrap", false, "start a new cluster of this node (ignored if -dir holds state)")
	flag.StringVar(&c.join, "join", "", "HTTP address of a member to join through")
	flag.Parse()
	c.logOutput = os.Stderr
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	n, err := startNode(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return errors.Join(err, n.close())
	}
	srv := &http.Server{Handler: n.handler()}
	go srv.Serve(ln)
	if c.join != "" {
		if err := askToJoin(c.join, c.httpAddr, n.transport.LocalAddr()); err != nil {
			return errors.Join(err, srv.Close(), n.close())
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(srv.Shutdown(ctx), n.close())
}

// askToJoin asks the member at via to add this node, following the
// redirect to the leader, retrying while the cluster has none.
func askToJoin(via, id string, raftAddr any) error {
	u := fmt.Sprintf("http://%s/join?id=%s&addr=%s", via, url.QueryEscape(id), url.QueryEscape(fmt.Sprint(raftAddr)))
	var last error
	for range 30 {
		resp, err := http.Post(u, "", bytes.NewReader(nil))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
			err = fmt.Errorf("join through %s: %s", via, resp.Status)
		}
		last = err
		time.Sleep(time.Second)
	}
	return last
}
