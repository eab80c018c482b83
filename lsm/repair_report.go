package lsm

import (
	"fmt"
	"strings"

	"github.com/monbandb/monban/internal/base"
)

// RepairReport says what Repair kept, set aside and rebuilt.
type RepairReport struct {
	Dir string
	// TablesKept counts the tables that verified and were merged,
	// TableEntries the entries they held.
	TablesKept   int
	TableEntries uint64
	// SetAside lists the tables and WALs moved into lost/, with why.
	SetAside []SetAsideFile
	// WALsReplayed counts the WALs read, a damaged one included (its
	// batches before the damage were kept); WALBatches the batches applied;
	// WALTornBytes the torn tails dropped.
	WALsReplayed int
	WALBatches   uint64
	WALTornBytes int64
	// Shadowed counts the versions dropped for a newer one of their key
	// (duplicates of one entry included), TombstonesDropped the tombstones
	// that had nothing left to hide.
	Shadowed, TombstonesDropped uint64
	// Tables are the numbers of the rebuilt tables, all in the last level;
	// KeysRecovered the keys they hold, one version each.
	Tables        []uint64
	KeysRecovered uint64
	// LastSeq is the highest sequence number seen; Manifest the new
	// manifest CURRENT names.
	LastSeq  base.SeqNum
	Manifest string
	// Removed are the files whose content the new tables hold, and the old
	// manifests, removed after the commit.
	Removed []string
}

// SetAsideFile is a file Repair moved into lost/ and the error that made
// it unusable.
type SetAsideFile struct {
	Name string
	Err  error
}

func (rep *RepairReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "repair of %s\n", rep.Dir)
	fmt.Fprintf(&b, "  tables kept:   %d (%d entries)\n", rep.TablesKept, rep.TableEntries)
	fmt.Fprintf(&b, "  WALs replayed: %d (%d batches, %d torn bytes dropped)\n", rep.WALsReplayed, rep.WALBatches, rep.WALTornBytes)
	fmt.Fprintf(&b, "  set aside in %s/: %d\n", lostDir, len(rep.SetAside))
	for _, f := range rep.SetAside {
		fmt.Fprintf(&b, "    %s: %v\n", f.Name, f.Err)
	}
	fmt.Fprintf(&b, "  rebuilt:       %d tables in L%d, %d keys (%d shadowed versions, %d tombstones dropped)\n",
		len(rep.Tables), NumLevels-1, rep.KeysRecovered, rep.Shadowed, rep.TombstonesDropped)
	fmt.Fprintf(&b, "  manifest:      %s, last sequence %d\n", rep.Manifest, rep.LastSeq)
	fmt.Fprintf(&b, "  removed:       %d merged inputs and old manifests\n", len(rep.Removed))
	return b.String()
}
