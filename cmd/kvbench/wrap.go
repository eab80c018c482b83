package main

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// width is the widest line kvbench prints in text: reports are read in
// terminals, mail and code review, all 80 columns wide.
const width = 80

// wrapWriter passes text through line by line, with trailing spaces
// removed and lines wider than width broken at a space (a word wider than
// the line, a long key, at the width). A continuation
// line starts under the first figure after the line's label ("Keys:   16
// bytes…", "  filters on : data blocks…") or, for a line without one, two
// columns right of the line's own indent. Tables are laid out to fit and
// pass through unchanged.
type wrapWriter struct {
	w   io.Writer
	buf []byte
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		if _, err := io.WriteString(ww.w, wrapLine(line)); err != nil {
			return len(p), err
		}
	}
}

// Flush writes a last line that has no newline.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	s := strings.TrimSuffix(wrapLine(string(ww.buf)), "\n")
	ww.buf = nil
	_, err := io.WriteString(ww.w, s)
	return err
}

// wrapLine returns line, broken to fit width, each piece ending in "\n".
func wrapLine(line string) string {
	line = strings.TrimRight(line, " \t")
	cont := continuationIndent(line)
	var out strings.Builder
	for utf8.RuneCountInString(line) > width {
		// cut is the byte index of the last space that leaves at most
		// width runes; a space between a figure and its unit ("3.0 MB/s",
		// "4.917 table filter probes") only if there is no other.
		cut, unitCut := -1, -1
		col, text := 0, false // text: a non-space past cont, so the cut keeps some
		for i, r := range line {
			if col > width {
				break
			}
			if r != ' ' && col >= cont {
				text = true
			}
			if r == ' ' && text && i+1 < len(line) && line[i+1] != ' ' {
				if isDigit(line[i-1]) && !isDigit(line[i+1]) && line[i+1] != '(' {
					unitCut = i
				} else {
					cut = i
				}
			}
			col++
		}
		if cut < 0 {
			cut = unitCut
		}
		if cut < 0 {
			// One word wider than what is left (a long key, quoted): cut
			// it at the width, the rest under it.
			cut = len(line)
			for i := range line {
				if utf8.RuneCountInString(line[:i]) == width {
					cut = i
					break
				}
			}
		}
		// Keep a short parenthesis whole: "(300 of 300 found)" moves down
		// as one.
		if open := strings.LastIndexByte(line[:cut], '('); open > strings.LastIndexByte(line[:cut], ')') &&
			utf8.RuneCountInString(line[:open]) > cont {
			if end := strings.IndexByte(line[open:], ')'); end >= 0 && end < 24 {
				cut = open
			}
		}
		out.WriteString(strings.TrimRight(line[:cut], " "))
		out.WriteByte('\n')
		line = strings.Repeat(" ", cont) + strings.TrimLeft(line[cut:], " ")
	}
	out.WriteString(line)
	out.WriteByte('\n')
	return out.String()
}

func continuationIndent(line string) int {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if i := strings.Index(line, ": "); i > 0 && i < 24 {
		j := i + 2
		// "Keys:        16 bytes": under the figure; "readrandom   :
		// 0.743 micros/op" (db_bench's right-aligned figures): under the
		// first column after the colon.
		for line[i-1] != ' ' && lead == 0 && j < len(line) && line[j] == ' ' {
			j++
		}
		if j <= 40 {
			return utf8.RuneCountInString(line[:j])
		}
	}
	return min(lead+2, 40)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
