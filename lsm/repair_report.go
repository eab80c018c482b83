package lsm

import (
	"fmt"
	"strings"
)

// RepairReport says what Repair found, kept, set aside and rebuilt.
type RepairReport struct {
	Dir string
	// TrustedManifest is the manifest Repair read to tell live files from
	// obsolete ones (step 1 of RepairWith), "" if none could be trusted.
	TrustedManifest string
	// TablesKept counts the tables that verified, whole or in part
	// (FatePartlyMerged), and were merged, TableEntries the entries read
	// from them, UnknownStanding those merged
	// without a trusted manifest to vouch that a newer tree had not
	// dropped them: all of them when TrustedManifest is "". A key deleted
	// by a compaction that left its inputs behind can come back from one.
	TablesKept      int
	TableEntries    uint64
	UnknownStanding int
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
	LastSeq  uint64
	Manifest string
	// Files lists every file Repair found in the directory (LOCK aside)
	// and what became of it; SetAside those now in lost/, Removed those
	// removed after the commit.
	Files    []RepairedFile
	SetAside []RepairedFile
	Removed  []string
}

// RepairedFile is a file Repair found, and what became of it.
type RepairedFile struct {
	Name string
	Fate Fate
	// Lost is where it is under the directory if it was set aside
	// ("lost/000012.sst"); Err says why, where something was wrong.
	Lost string
	Err  error
}

// Fate is what Repair did with a file.
type Fate uint8

const (
	// FateMerged: every record went into the new tables; removed after
	// the commit. Err, if set, is damage in a part the merge does not
	// need: a table's filter or range filter, which the new tables write
	// afresh.
	FateMerged Fate = iota + 1
	// FatePartlyMerged: a WAL whose batches up to its damage, or a table
	// whose data blocks but the damaged ones (Err says which), went into
	// the new tables; copied into lost/, the original removed after the
	// commit.
	FatePartlyMerged
	// FateDamaged: does not verify (Err says where); moved into lost/
	// (copied, the original removed after the commit, if the trusted
	// manifest names it), nothing of it merged. For a manifest: copied,
	// and not trusted.
	FateDamaged
	// FateObsolete: the trusted manifest shows a newer tree dropped it (a
	// table no live version names, a WAL holding a log below the log
	// number), or no manifest ever named it (a table a flush or
	// compaction was writing, under its temporary name, when a crash cut
	// it short); moved into lost/ unmerged (copied, if its name is at or
	// above the log number), so it cannot bring back what was deleted
	// since.
	FateObsolete
	// FateAfterDamage: a WAL after one that does not replay to its end;
	// moved into lost/ unread, so the DB holds a prefix of the commits.
	FateAfterDamage
	// FateNotMonban: has a name monban uses but not monban's format
	// (another program's file; a table cut short that the trusted
	// manifest names is FateDamaged); moved into lost/, so that the
	// repaired directory holds only monban's files under monban's names.
	FateNotMonban
	// FateSuperseded: CURRENT, CURRENT.tmp or a manifest that read, which
	// the new manifest replaces; a copy is in lost/.
	FateSuperseded
	// FateLeft: a name monban never writes; left where it is, untouched.
	FateLeft
)

func (f Fate) String() string {
	switch f {
	case FateMerged:
		return "merged, removed"
	case FatePartlyMerged:
		return "merged but for its damage, set aside"
	case FateDamaged:
		return "damaged, set aside"
	case FateObsolete:
		return "obsolete, set aside unmerged"
	case FateAfterDamage:
		return "after a damaged WAL, set aside unread"
	case FateNotMonban:
		return "not monban's, set aside"
	case FateSuperseded:
		return "superseded, copy set aside"
	case FateLeft:
		return "not monban's, left in place"
	}
	return fmt.Sprintf("Fate(%d)", uint8(f))
}

func (rep *RepairReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "repair of %s\n", rep.Dir)
	trusted := rep.TrustedManifest
	if trusted == "" {
		trusted = "none (every table merged is of unknown standing)"
	}
	fmt.Fprintf(&b, "  trusted manifest: %s\n", trusted)
	fmt.Fprintf(&b, "  tables kept:   %d (%d entries, %d of unknown standing)\n", rep.TablesKept, rep.TableEntries, rep.UnknownStanding)
	fmt.Fprintf(&b, "  WALs replayed: %d (%d batches, %d torn bytes dropped)\n", rep.WALsReplayed, rep.WALBatches, rep.WALTornBytes)
	fmt.Fprintf(&b, "  rebuilt:       %d tables in L%d, %d keys (%d shadowed versions, %d tombstones dropped)\n",
		len(rep.Tables), NumLevels-1, rep.KeysRecovered, rep.Shadowed, rep.TombstonesDropped)
	fmt.Fprintf(&b, "  manifest:      %s, last sequence %d\n", rep.Manifest, rep.LastSeq)
	fmt.Fprintf(&b, "  files:         %d found, %d set aside in %s/, %d removed\n", len(rep.Files), len(rep.SetAside), lostDir, len(rep.Removed))
	for _, f := range rep.Files {
		fmt.Fprintf(&b, "    %s: %v", f.Name, f.Fate)
		if f.Lost != "" {
			fmt.Fprintf(&b, " (%s)", f.Lost)
		}
		if f.Err != nil {
			fmt.Fprintf(&b, ": %v", f.Err)
		}
		b.WriteString("\n")
	}
	return b.String()
}
