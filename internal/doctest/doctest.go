// Package doctest reads the worked examples of monban's docs, so that the
// tests that pin an example compare the code with the markdown itself, not
// with a Go copy of it: editing either side by one byte fails the test.
//
// A hex example is the first fenced block after a marker line of the doc.
// Each of its lines may start with "offset N" and then holds bytes as
// two-digit hex tokens up to the first token that is not one — the
// comment that explains them (a comment may quote other bytes: they come
// after a word, so they are not read).
package doctest

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// Hex returns the bytes of the example that follows the line containing
// marker in the markdown file at path.
func Hex(t testing.TB, path, marker string) []byte {
	t.Helper()
	block := Block(t, path, marker)
	var out []byte
	for _, line := range strings.Split(block, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "offset" {
			fields = fields[2:]
		}
		for _, f := range fields {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				break
			}
			out = append(out, b[0])
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: the block after %q holds no hex bytes", path, marker)
	}
	return out
}

// Block returns the contents of the first fenced block after the line of
// the markdown file at path that contains marker.
func Block(t testing.TB, path, marker string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s has no line containing %q", path, marker)
	}
	if strings.Contains(s[i+len(marker):], marker) {
		t.Fatalf("%s: %q marks more than one place", path, marker)
	}
	start := strings.Index(s[i:], "```")
	if start < 0 {
		t.Fatalf("%s: no fenced block after %q", path, marker)
	}
	body := s[i+start:]
	body = body[strings.Index(body, "\n")+1:]
	end := strings.Index(body, "```")
	if end < 0 {
		t.Fatalf("%s: the block after %q is not closed", path, marker)
	}
	return body[:end]
}
