package manifest

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// FuzzRecover feeds arbitrary manifest and CURRENT bytes to Recover: it
// must succeed or fail with corruption, never with fs.ErrNotExist (a
// CURRENT exists, so this is a DB, however damaged), never panic or hang.
// Seeds are real manifests, their tables with ids and without (tag 7).
func FuzzRecover(f *testing.F) {
	for _, n := range []int{1, 3, 20} {
		mem, _, _, path := buildDB(f, n)
		f.Add(readFile(f, mem, path), []byte(path[len(testDir)+1:]+"\n"))
	}
	legacy := vfs.NewMem()
	vs, err := Create(legacy, testDir)
	if err != nil {
		f.Fatal(err)
	}
	m := tableFor(vs.NextFileNum(), "a", "b", 1)
	m.TableID = 0
	if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: m}}}); err != nil {
		f.Fatal(err)
	}
	vs.Close()
	f.Add(readFile(f, legacy, testDir+"/MANIFEST-000001"), []byte("MANIFEST-000007\n"))
	f.Fuzz(func(t *testing.T, manifest, current []byte) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll(testDir); err != nil {
			t.Fatal(err)
		}
		writeFile(t, mem, testDir+"/MANIFEST-000007", manifest)
		writeFile(t, mem, testDir+"/CURRENT", current)
		vs, err := Recover(mem, testDir)
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Recover: %v does not wrap ErrCorruption alone", err)
			}
			return
		}
		// Whatever recovers satisfies the Version invariants and recovers
		// again to the same state.
		v := vs.Current()
		for level, files := range v.Levels {
			if err := checkLevel(level, files); err != nil {
				t.Fatal(err)
			}
		}
		vs.Close()
		vs2, err := Recover(mem, testDir)
		if err != nil {
			t.Fatalf("second recovery: %v", err)
		}
		v2 := vs2.Current()
		if err := versionsEqual(v, v2); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConcurrentReaders runs readers taking and dropping Versions while
// edits are applied, for the race detector; every Version a reader sees
// satisfies the invariants and keeps its tables live while held.
func TestConcurrentReaders(t *testing.T) {
	rng := newRNG(t)
	vs, err := Create(vfs.NewMem(), testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.SetMaxManifestSize(4096)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := vs.Current()
				live := vs.LiveFiles()
				for level, files := range v.Levels {
					if err := checkLevel(level, files); err != nil {
						errs <- err
					}
					for _, f := range files {
						if !live[f.FileNum] {
							errs <- errors.New("a held table is not live")
						}
						v.FindFile(level, f.Smallest.UserKey)
					}
				}
				_ = vs.LastSeq() + base.SeqNum(vs.LogNum())
				v.Unref()
			}
		}()
	}
	d := newDriver(t, rng, vs)
	for range 300 {
		d.apply(d.randEdit())
		vs.TakeObsolete()
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// FuzzCurrentTempIsOwn: CurrentTempIsOwn never panics; it is true of
// every prefix of what a rollover writes to CURRENT.tmp (a manifest name
// and a newline), with or without zeros after it, as a crash leaves it;
// and where it is true of whole bytes (a newline at their end), they name
// a manifest.
func FuzzCurrentTempIsOwn(f *testing.F) {
	for _, s := range []string{"MANIFEST-000007\n", "MANIF", "", "MANIFEST-1234567\n\x00", "CURRENT\n", "MANIFEST-\n"} {
		f.Add([]byte(s), uint64(7), uint8(255), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, num uint64, cut, zeros uint8) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll(testDir); err != nil {
			t.Fatal(err)
		}
		isOwn := func(b []byte) bool {
			writeFile(t, mem, testDir+"/CURRENT.tmp", b)
			own, err := CurrentTempIsOwn(mem, testDir+"/CURRENT.tmp")
			if err != nil {
				t.Fatal(err)
			}
			return own
		}
		written := MakeFilename(KindManifest, num%(maxFileNum+1)) + "\n"
		left := append([]byte(written[:int(cut)%(len(written)+1)]), make([]byte, zeros)...)
		if !isOwn(left) {
			t.Fatalf("CurrentTempIsOwn(%q), a crash's leftover of %q, is false", left, written)
		}
		if name, whole := strings.CutSuffix(strings.TrimRight(string(data), "\x00"), "\n"); isOwn(data) && whole {
			if kind, _, ok := ParseFilename(name); !ok || kind != KindManifest {
				t.Fatalf("CurrentTempIsOwn(%q) is true, but %q names no manifest", data, name)
			}
		}
	})
}
