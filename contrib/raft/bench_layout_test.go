package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// BenchmarkLayout measures what a committed command costs on disk with
// raft's log and the state in one monban DB against two. Each command is
// what a node does for it: StoreLogs of the entry (synced), then the
// FSM's batch — the put and the applied index, not synced — and, every
// 1,000 commands, the log truncated to its last 100 entries as after a
// snapshot. The one-DB layout writes the FSM's batch into the Store's DB
// under the FSM's prefix: an emulation of an FSM sharing the DB, which
// the FSM type does not offer (restoring a snapshot into a shared DB
// would have to rewrite every key through the WAL; see README).
//
// disk-B/cmd is WAL bytes plus table bytes written (flushes and
// compactions) over both DBs, after a final flush and full compaction,
// also reported apart (wal-B/cmd, table-B/cmd); syncs/cmd the WAL fsyncs.
func BenchmarkLayout(b *testing.B) {
	for _, layout := range []string{"one-db", "two-dbs"} {
		b.Run(layout, func(b *testing.B) {
			s := openBenchStore(b, func(dir string) (logStore, error) { return Open(dir, nil) }).(*Store)
			state := s.db
			if layout == "two-dbs" {
				db, err := lsm.Open(b.TempDir(), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { db.Close() })
				state = db
			}
			dbs := []*lsm.DB{s.db}
			if state != s.db {
				dbs = append(dbs, state)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			value := make([]byte, 128)
			var fsmBatch lsm.Batch
			b.ResetTimer()
			for i := range b.N {
				index := uint64(i + 1)
				for j := range value {
					value[j] = byte(rng.Uint32())
				}
				key := fmt.Appendf(nil, "key%05d", rng.IntN(10000))
				if err := s.StoreLog(&hraft.Log{Index: index, Term: 1, Type: hraft.LogCommand, Data: PutCommand(key, value)}); err != nil {
					b.Fatal(err)
				}
				fsmBatch.Reset()
				fsmBatch.Put(append([]byte{dataPrefix}, key...), value)
				fsmBatch.Put([]byte(appliedKey), binary.BigEndian.AppendUint64(nil, index))
				if err := state.Write(&fsmBatch, lsm.NoSync); err != nil {
					b.Fatal(err)
				}
				if index%1000 == 0 {
					if err := s.DeleteRange(1, index-100); err != nil {
						b.Fatal(err)
					}
				}
			}
			var walBytes, tableBytes, syncs uint64
			for _, db := range dbs {
				if err := errors.Join(db.Flush(), db.Compact()); err != nil {
					b.Fatal(err)
				}
				st := db.Stats()
				walBytes += st.WALBytes
				tableBytes += st.Total.TableBytesWritten
				syncs += st.WALSyncs
			}
			b.ReportMetric(float64(walBytes+tableBytes)/float64(b.N), "disk-B/cmd")
			b.ReportMetric(float64(walBytes)/float64(b.N), "wal-B/cmd")
			b.ReportMetric(float64(tableBytes)/float64(b.N), "table-B/cmd")
			b.ReportMetric(float64(syncs)/float64(b.N), "syncs/cmd")
		})
	}
}
