package lsm

import (
	"bytes"
	"slices"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestOpenRemovesOnlyOwnStrayManifests: Open removes the manifests
// CURRENT does not name once its own is durable — those a crashed
// rollover left, in monban's format or empty — but a file of a
// manifest's name whose bytes are not a manifest of monban's is nobody's
// stray that Open can prove: it stays, byte for byte.
func TestOpenRemovesOnlyOwnStrayManifests(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, nil)
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	current := string(readFile(t, mem, "/db/CURRENT"))
	own := readFile(t, mem, "/db/"+current[:len(current)-1])
	junk := bytes.Repeat([]byte("not a manifest "), 14)
	files := map[string][]byte{
		"MANIFEST-000900": own,  // a crashed rollover's, whole
		"MANIFEST-000901": nil,  // one that crashed before its first byte
		"MANIFEST-000999": junk, // somebody else's bytes
		"MANIFEST-000000": junk,
	}
	for name, data := range files {
		rewrite(t, mem, "/db/"+name, data)
	}
	d = openMem(t, mem, nil)
	mustGet(t, d, "k", "v")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		kept := slices.Contains(names, name)
		switch {
		case data == nil || bytes.Equal(data, own):
			if kept {
				t.Errorf("%s, a stray of monban's, was kept", name)
			}
		case !kept:
			t.Errorf("%s, not a manifest of monban's, was removed", name)
		case !bytes.Equal(readFile(t, mem, "/db/"+name), data):
			t.Errorf("%s, not a manifest of monban's, was changed", name)
		}
	}
}
