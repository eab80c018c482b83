package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/raft"
	monbanraft "github.com/monbandb/monban/contrib/raft"
	"github.com/monbandb/monban/lsm"
)

// maxValue bounds a PUT's body: a raft entry travels whole to every node.
const maxValue = 1 << 20

// handler is the node's HTTP API:
//
//	GET    /kv/{key}              the value on this node (it may lag the leader)
//	GET    /kv/{key}?consistent   the value after a raft barrier, on the leader
//	PUT    /kv/{key}              body: the value; committed through the leader
//	DELETE /kv/{key}              committed through the leader
//	POST   /join?id=ID&addr=ADDR  adds a voter: its HTTP address as ID, its raft address
//	GET    /status                this node's raft state, leader, log and applied index
//
// A write, join or consistent read sent to a follower is redirected (307)
// to the leader.
func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("consistent") {
			// A barrier commits through a majority and returns once every
			// entry before it is applied here: the read that follows sees
			// every write acknowledged before the request.
			if err := n.raft.Barrier(10 * time.Second).Error(); err != nil {
				n.reply(w, r, err)
				return
			}
		}
		v, err := n.fsm.Get([]byte(r.PathValue("key")))
		switch {
		case errors.Is(err, lsm.ErrNotFound):
			http.Error(w, "not found", http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.Write(v)
		}
	})
	mux.HandleFunc("PUT /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		v, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValue))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		n.reply(w, r, n.apply(monbanraft.PutCommand([]byte(r.PathValue("key")), v)))
	})
	mux.HandleFunc("DELETE /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		n.reply(w, r, n.apply(monbanraft.DeleteCommand([]byte(r.PathValue("key")))))
	})
	mux.HandleFunc("POST /join", func(w http.ResponseWriter, r *http.Request) {
		id, addr := r.URL.Query().Get("id"), r.URL.Query().Get("addr")
		if id == "" || addr == "" {
			http.Error(w, "join needs id and addr", http.StatusBadRequest)
			return
		}
		n.reply(w, r, n.join(id, addr))
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		_, leader := n.raft.LeaderWithID()
		last, _ := n.store.LastIndex()
		fmt.Fprintf(w, "state %s\nleader %s\nlast index %d\napplied index %d\n",
			n.raft.State(), leader, last, n.fsm.AppliedIndex())
	})
	return mux
}

// reply answers a write: done, redirected to the leader, or failed.
func (n *node) reply(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, raft.ErrNotLeader):
		_, leader := n.raft.LeaderWithID()
		if leader == "" {
			http.Error(w, "no leader yet", http.StatusServiceUnavailable)
			return
		}
		u := *r.URL
		u.Scheme, u.Host = "http", string(leader) // a server's ID is its HTTP address
		http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		// An election's: the write may yet commit under the next leader,
		// or not; the client retries, as it does with no leader at all.
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
