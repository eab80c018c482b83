package vfs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFileDataModel checks chunked file contents against one flat slice:
// appends of every size around chunk boundaries, reads at any offset and
// limit, and prefixes that stay unchanged while both sides keep appending.
func TestFileDataModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0))
			var key [32]byte
			key[0] = byte(seed)
			bytesrc := rand.NewChaCha8(key)
			d, model := &fileData{}, []byte{}
			type snap struct {
				p    *fileData
				want []byte
			}
			var snaps []snap
			for step := 0; step < 25; step++ {
				sizes := []int{0, 1, 100, chunkSize - 1, chunkSize, chunkSize + 1, 3 * chunkSize / 2}
				p := make([]byte, sizes[r.IntN(len(sizes))])
				bytesrc.Read(p)
				d.append(p)
				model = append(model, p...)
				if d.size != int64(len(model)) {
					t.Fatalf("seed %d step %d: size %d, model %d", seed, step, d.size, len(model))
				}
				off := r.Int64N(d.size + 1)
				limit := off + r.Int64N(d.size-off+1)
				buf := make([]byte, r.IntN(3*chunkSize))
				n := d.readAt(buf, off, limit)
				want := model[off:min(limit, off+int64(len(buf)))]
				if !bytes.Equal(buf[:n], want) {
					t.Fatalf("seed %d step %d: readAt(%d, limit %d) differs", seed, step, off, limit)
				}
				if r.IntN(4) == 0 {
					n := r.Int64N(d.size + 1)
					snaps = append(snaps, snap{d.prefix(n), bytes.Clone(model[:n])})
				}
				for i := range snaps {
					s := &snaps[i]
					s.p.append([]byte("x"))
					s.want = append(s.want, 'x')
					got := make([]byte, s.p.size)
					s.p.readAt(got, 0, s.p.size)
					if !bytes.Equal(got, s.want) {
						t.Fatalf("seed %d step %d: a prefix changed", seed, step)
					}
				}
			}
		})
	}
}
