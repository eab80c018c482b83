package manifest

import "testing"

func TestFilenames(t *testing.T) {
	for _, tc := range []struct {
		kind FileKind
		num  uint64
		name string
	}{
		{KindTable, 12, "000012.sst"},
		{KindLog, 7, "000007.log"},
		{KindManifest, 1, "MANIFEST-000001"},
		{KindTable, 1234567, "1234567.sst"},
		{KindLog, 1<<48 - 1, "281474976710655.log"},
		{KindCurrent, 0, "CURRENT"},
		{KindCurrentTemp, 0, "CURRENT.tmp"},
		{KindLock, 0, "LOCK"},
		{KindTableTemp, 12, "000012.tmp.sst"},
	} {
		if got := MakeFilename(tc.kind, tc.num); got != tc.name {
			t.Errorf("MakeFilename(%v, %d) = %q, want %q", tc.kind, tc.num, got, tc.name)
		}
		kind, num, ok := ParseFilename(tc.name)
		if !ok || kind != tc.kind || num != tc.num {
			t.Errorf("ParseFilename(%q) = %v, %d, %v", tc.name, kind, num, ok)
		}
	}
	for _, bad := range []string{"", "12.sst", "00001x.sst", "+00012.sst", "0000012.sst", "MANIFEST-", "MANIFEST-12",
		"000012.tmp", "12.tmp.sst", "000012.tmp.tmp.sst", "current", "99999999999999999999.log", "LOCK2",
		"281474976710656.sst", "18446744073709551615.log", "MANIFEST-18446744073709551615"} {
		if kind, num, ok := ParseFilename(bad); ok {
			t.Errorf("ParseFilename(%q) = %v, %d, accepted", bad, kind, num)
		}
	}
}
