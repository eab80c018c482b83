package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// FileKind says what a file in a DB directory holds. Table files, WALs and
// manifests draw their numbers from one counter (VersionSet.NextFileNum), so
// a number names at most one file of any kind.
type FileKind uint8

const (
	// KindTable is an SSTable: "%06d.sst".
	KindTable FileKind = iota + 1
	// KindLog is a write-ahead log: "%06d.log".
	KindLog
	// KindManifest is a manifest, a log of version edits: "MANIFEST-%06d".
	KindManifest
	// KindCurrent is the CURRENT file naming the live manifest.
	KindCurrent
	// KindCurrentTemp is CURRENT.tmp, the staging name of a new CURRENT;
	// one left behind by a crash is garbage.
	KindCurrentTemp
	// KindLock is the LOCK file that keeps a second process out.
	KindLock
	// KindTableTemp is an SSTable being written: "%06d.tmp.sst". A flush
	// or compaction renames it to its KindTable name once it is whole and
	// synced, so one left behind was cut short, and no manifest named it.
	KindTableTemp
)

func (k FileKind) String() string {
	switch k {
	case KindTable:
		return "table"
	case KindLog:
		return "log"
	case KindManifest:
		return "manifest"
	case KindCurrent:
		return "current"
	case KindCurrentTemp:
		return "current-temp"
	case KindLock:
		return "lock"
	case KindTableTemp:
		return "table-temp"
	}
	return fmt.Sprintf("FileKind(%d)", uint8(k))
}

const (
	currentName     = "CURRENT"
	currentTempName = "CURRENT.tmp"
	lockName        = "LOCK"
	manifestPrefix  = "MANIFEST-"
)

// MakeFilename returns the name (not the path) of file num of the given
// kind. num is ignored for CURRENT, CURRENT.tmp and LOCK. Numbers are padded
// to six digits and grow past them when they must, as in LevelDB.
func MakeFilename(kind FileKind, num uint64) string {
	switch kind {
	case KindTable:
		return fmt.Sprintf("%06d.sst", num)
	case KindLog:
		return fmt.Sprintf("%06d.log", num)
	case KindManifest:
		return fmt.Sprintf("%s%06d", manifestPrefix, num)
	case KindCurrent:
		return currentName
	case KindCurrentTemp:
		return currentTempName
	case KindLock:
		return lockName
	case KindTableTemp:
		return fmt.Sprintf("%06d.tmp.sst", num)
	}
	panic(fmt.Sprintf("manifest: MakeFilename of unknown kind %d", kind))
}

// ParseFilename is MakeFilename's inverse. ok is false for names monban
// never creates, which the DB leaves alone. num is 0 for CURRENT,
// CURRENT.tmp and LOCK.
func ParseFilename(name string) (kind FileKind, num uint64, ok bool) {
	switch name {
	case currentName:
		return KindCurrent, 0, true
	case currentTempName:
		return KindCurrentTemp, 0, true
	case lockName:
		return KindLock, 0, true
	}
	if rest, found := strings.CutPrefix(name, manifestPrefix); found {
		num, ok = parseNum(rest)
		return KindManifest, num, ok
	}
	if rest, found := strings.CutSuffix(name, ".tmp.sst"); found {
		num, ok = parseNum(rest)
		return KindTableTemp, num, ok
	}
	if rest, found := strings.CutSuffix(name, ".sst"); found {
		num, ok = parseNum(rest)
		return KindTable, num, ok
	}
	if rest, found := strings.CutSuffix(name, ".log"); found {
		num, ok = parseNum(rest)
		return KindLog, num, ok
	}
	return 0, 0, false
}

// maxFileNum is the largest file number a name may carry. A DB numbers
// its files one after another from 1, and at a million files a second
// would take nine years to get here; a name past it is some other
// program's, and read as monban's it would carry the next number past
// 2^64, wrapping the counter onto the numbers of live files.
const maxFileNum = 1<<48 - 1

// parseNum accepts exactly the digits MakeFilename writes: at least six,
// no sign, and no extra leading zero beyond the padding, so that a name
// round-trips (ParseFilename then MakeFilename gives the name back), of
// a number no larger than maxFileNum.
func parseNum(s string) (uint64, bool) {
	if len(s) < 6 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || len(s) > 6 && s[0] == '0' || n > maxFileNum {
		return 0, false
	}
	return n, true
}
