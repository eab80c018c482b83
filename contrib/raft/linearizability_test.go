package raft

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// linzOp is a client's operation on one key: a put of a value no other
// put writes, or a get.
type linzOp struct {
	put bool
	key int
	val int // the put's value; the get's result, 0 for absent
}

// linzModel is a register per key; a history is checked key by key.
var linzModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(linzOp).key
			byKey[k] = append(byKey[k], op)
		}
		var parts [][]porcupine.Operation
		for _, p := range byKey {
			parts = append(parts, p)
		}
		return parts
	},
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		in := input.(linzOp)
		if in.put {
			return true, in.val
		}
		return output.(int) == state.(int), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(linzOp)
		if in.put {
			return fmt.Sprintf("put(k%d, %d)", in.key, in.val)
		}
		return fmt.Sprintf("get(k%d) = %d", in.key, output.(int))
	},
}

// TestClusterLinearizable has clients put and get through whichever node
// leads while the leader is crashed and restarted, and checks with
// porcupine that the history is linearizable. A get is a raft barrier
// on the leader, then a read of its FSM: every write committed before the
// barrier is applied by then. A put whose outcome the client never
// learned (the leader stopped under it) may have happened at any time
// after its call.
func TestClusterLinearizable(t *testing.T) {
	clients, opsPerClient, crashes := 4, 40, 2
	if long() {
		clients, opsPerClient, crashes = 6, 300, 8
	}
	const keys = 4
	c := newCluster(t, 3, nil)
	c.leader()
	var mu sync.Mutex // guards the nodes' fields while the disruptor replaces them
	leader := func() (*hraft.Raft, *FSM) {
		mu.Lock()
		defer mu.Unlock()
		for _, nd := range c.nodes {
			if nd.raft != nil && nd.raft.State() == hraft.Leader {
				return nd.raft, nd.fsm
			}
		}
		return nil, nil
	}
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var history []porcupine.Operation
	var nextVal atomic.Int64
	var wg sync.WaitGroup
	var hmu sync.Mutex
	for id := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(id), 27))
			for range opsPerClient {
				op := linzOp{put: rng.IntN(2) == 0, key: rng.IntN(keys)}
				if op.put {
					op.val = int(nextVal.Add(1))
				}
				call := now()
				out, known := linzDo(leader, op)
				ret := now()
				if !known {
					if !op.put {
						continue // a get that returned nothing tells nothing
					}
					ret = math.MaxInt64 // may take effect at any time after its call
				}
				hmu.Lock()
				history = append(history, porcupine.Operation{ClientId: id, Input: op, Call: call, Output: out, Return: ret})
				hmu.Unlock()
			}
		}()
	}
	for range crashes {
		time.Sleep(200 * time.Millisecond)
		i := c.leader()
		mu.Lock()
		c.stop(i)
		mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		c.start(i)
		mu.Unlock()
	}
	wg.Wait()
	res, _ := porcupine.CheckOperationsVerbose(linzModel, history, 30*time.Second)
	if res == porcupine.Illegal {
		t.Fatalf("a history of %d operations through %d leader crashes is not linearizable", len(history), crashes)
	}
	t.Logf("%d operations, %v", len(history), res)
}

// linzDo runs op through the current leader, retrying while there is
// none. It returns the get's result, and whether the outcome is known.
func linzDo(leader func() (*hraft.Raft, *FSM), op linzOp) (out int, known bool) {
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		r, f := leader()
		if r == nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		key := []byte(fmt.Sprintf("k%d", op.key))
		if op.put {
			err := r.Apply(PutCommand(key, []byte(strconv.Itoa(op.val))), time.Second).Error()
			switch {
			case err == nil:
				return 0, true
			case errors.Is(err, hraft.ErrNotLeader):
				continue // refused before it was appended: never happened
			default:
				return 0, false // appended, perhaps replicated: unknown
			}
		}
		if err := r.Barrier(time.Second).Error(); err != nil {
			continue
		}
		v, err := f.Get(key)
		switch {
		case errors.Is(err, lsm.ErrNotFound):
			return 0, true
		case err != nil:
			continue
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			n = -1 // no put wrote it: the checker rejects the history
		}
		return n, true
	}
	return 0, false
}
