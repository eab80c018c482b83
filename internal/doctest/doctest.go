// Package doctest reads the worked examples of monban's docs, so that the
// tests that pin an example compare the code with the markdown itself, not
// with a Go copy of it: editing either side by one byte fails the test.
//
// # Marked examples
//
// An example is marked by an HTML comment naming the code that generates
// it — invisible when the markdown is rendered, unambiguous when a test
// reads it:
//
//	<!-- doctest: kvbench teach deep -->
//	```
//	Get("k302")
//	...
//	```
//
// The example is the fenced block that starts on the next line, or, when
// the comment is followed on its own line by an inline code span, that
// span: "CURRENT = <!-- doctest: format current -->`4d 41 …`". Examples
// lists them; the tests of the packages that own each generator compare
// them (internal/doctest for "format …", cmd/kvbench for "kvbench teach …"),
// and TestEveryExampleIsMarked fails on a trace or hex block without a
// marker, so no example escapes.
//
// # Hex
//
// Each line of a hex example may start with "offset N" and then holds
// bytes as two-digit hex tokens up to the first token that is not one —
// the comment that explains them (a comment may quote other bytes: they
// come after a word, so they are not read). A line whose bytes are followed
// by "(× N …)" stands for N copies of them; a "|" between bytes separates
// fields and is skipped. An excerpt of a longer file
// names where each part starts with "@N" on a line of prose before it
// (Regions).
package doctest

import (
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Hex returns the bytes of the example that follows the line containing
// marker in the markdown file at path.
func Hex(t testing.TB, path, marker string) []byte {
	t.Helper()
	out := ParseHex(Block(t, path, marker))
	if len(out) == 0 {
		t.Fatalf("%s: the block after %q holds no hex bytes", path, marker)
	}
	return out
}

// ParseHex returns the bytes of a hex example (package doc, "Hex").
func ParseHex(text string) []byte {
	var out []byte
	for _, line := range strings.Split(text, "\n") {
		out = append(out, lineBytes(line)...)
	}
	return out
}

// lineBytes returns the bytes of one line of a hex example, repeated as
// its "(× N" comment says.
func lineBytes(line string) []byte {
	fields := strings.Fields(line)
	if len(fields) >= 2 && fields[0] == "offset" {
		fields = fields[2:]
	}
	var out []byte
	for i, f := range fields {
		if f == "|" && len(out) > 0 {
			continue // a field separator: "63 61 74 | 01 05 …"
		}
		b, err := hex.DecodeString(f)
		if err != nil || len(b) != 1 {
			if f == "(×" && i+1 < len(fields) && len(out) > 0 {
				if n, err := strconv.Atoi(fields[i+1]); err == nil && n > 0 {
					return []byte(strings.Repeat(string(out), n))
				}
			}
			break
		}
		out = append(out, b[0])
	}
	return out
}

// A Region is one part of an excerpt: the bytes shown from Offset on.
type Region struct {
	Offset int
	Bytes  []byte
}

var atOffset = regexp.MustCompile(`@(\d+)`)

// Regions returns the parts of an excerpt of a longer file: a line that
// holds no bytes and names "@N" starts a part at offset N; the bytes of
// the lines after it, up to the next such line, are contiguous from N.
func Regions(text string) []Region {
	var rs []Region
	for _, line := range strings.Split(text, "\n") {
		b := lineBytes(line)
		if len(b) == 0 {
			if m := atOffset.FindStringSubmatch(line); m != nil {
				off, _ := strconv.Atoi(m[1])
				rs = append(rs, Region{Offset: off})
			}
			continue
		}
		if len(rs) == 0 {
			rs = append(rs, Region{})
		}
		rs[len(rs)-1].Bytes = append(rs[len(rs)-1].Bytes, b...)
	}
	return rs
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
