package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestTableIDProperty: the table and DB ids given to the writer come back
// from Finish and from Open; a writer given 0 stores no property for it.
func TestTableIDProperty(t *testing.T) {
	const id, dbID = 0x8a1c2b3d4e5f6071, 0x0123456789abcdef
	for _, shape := range []int{0, 1, 3} { // empty, small, many blocks
		es := randEntries(newRand(uint64(shape)), shape)
		opts := randOptions(newRand(uint64(shape)))
		opts.TableID, opts.DBID = id, dbID
		data, p := buildTable(t, es, opts)
		r := openTable(t, data, nil)
		if got := r.Properties(); p.TableID != id || got.TableID != id || p.DBID != dbID || got.DBID != dbID {
			t.Errorf("shape %d: Finish says ids %#x, %#x, Open %#x, %#x; want %#x, %#x", shape, p.TableID, p.DBID,
				got.TableID, got.DBID, uint64(id), uint64(dbID))
		}
		r.Close()

		opts.TableID, opts.DBID = 0, 0
		data, p = buildTable(t, es, opts)
		if got := openTable(t, data, nil).Properties(); p.TableID != 0 || got.TableID != 0 || got.DBID != 0 {
			t.Errorf("shape %d: table written without ids reads back %#x, %#x", shape, got.TableID, got.DBID)
		}
		for _, name := range []string{propTableID, propDBID} {
			if bytes.Contains(data, []byte(name)) {
				t.Errorf("shape %d: table written without ids stores %q", shape, name)
			}
		}
	}
}

// TestOpenChecksIdentity: Open compares the file with what the caller (the
// manifest) expects of it. Every mismatch is corruption, named in the
// error with both values; 0 means "do not check".
func TestOpenChecksIdentity(t *testing.T) {
	const id = 0x8a1c2b3d4e5f6071
	es := evenKeys(100)
	data, _ := buildTable(t, es, WriterOptions{TableID: id})
	noID, _ := buildTable(t, es, WriterOptions{})
	size := uint64(len(data))
	for _, c := range []struct {
		name      string
		data      []byte
		size, id  uint64
		wantError string // "" = opens
	}{
		{"nothing expected", data, 0, 0, ""},
		{"both match", data, size, id, ""},
		{"size only", data, size, 0, ""},
		{"id only", data, 0, id, ""},
		{"no id, none expected", noID, uint64(len(noID)), 0, ""},
		{"larger file", data, size - 1, id,
			fmt.Sprintf("000007.sst is %d bytes, the manifest says %d", size, size-1)},
		{"truncated file", data[:size-10], size, id,
			fmt.Sprintf("000007.sst is %d bytes, the manifest says %d", size-10, size)},
		{"truncated below the footer", data[:10], size, id,
			fmt.Sprintf("000007.sst is 10 bytes, the manifest says %d", size)},
		{"another table's id", data, size, id + 1,
			"000007.sst holds table id 0x8a1c2b3d4e5f6071, the manifest expects 0x8a1c2b3d4e5f6072: another table's file?"},
		{"no id where one is expected", noID, 0, id,
			"000007.sst holds no table id, the manifest expects 0x8a1c2b3d4e5f6071: another table's file?"},
	} {
		f := &memFile{data: c.data}
		r, err := Open(f, ReaderOptions{FileNum: 7, ExpectSize: c.size, ExpectTableID: c.id})
		switch {
		case c.wantError == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantError == "":
			r.Close()
		case err == nil:
			r.Close()
			t.Errorf("%s: opened; want error %q", c.name, c.wantError)
		case !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), c.wantError):
			t.Errorf("%s: error %q; want one wrapping ErrCorruption containing %q", c.name, err, c.wantError)
		case strings.Contains(err.Error(), "footer"):
			t.Errorf("%s: %q mentions the footer: the size check must come first", c.name, err)
		case !f.closed:
			t.Errorf("%s: failed Open left the file open", c.name)
		}
	}
}

// TestCheckIdentityAgreesWithOpen: CheckIdentity gives the error Open
// gives, word for word, for every file whose fault lies in what it reads
// (size, footer, properties block, table id): truncated, another table's
// file, a footer that disagrees with the properties about the filter, and
// a bit flipped anywhere from the properties block to the end.
// A flip before the properties block is in what it does not read (data,
// index, filter), so it passes there whatever Open says; and a good table
// passes both.
func TestCheckIdentityAgreesWithOpen(t *testing.T) {
	const id = 0x8a1c2b3d4e5f6071
	var tables [][]byte
	for _, shape := range []int{0, 1, 3, 4} { // not 2, of 3 MiB: every flip costs an Open
		opts := randOptions(newRand(uint64(shape)))
		opts.TableID = id + uint64(len(tables))
		data, _ := buildTable(t, randEntries(newRand(uint64(shape)), shape), opts)
		tables = append(tables, data)
	}
	check := func(what string, data []byte, ref TableRef) (identityErr error) {
		t.Helper()
		_, identityErr = CheckIdentity(&memFile{data: data}, ref)
		r, openErr := Open(&memFile{data: data}, ReaderOptions{FileNum: ref.FileNum, ExpectSize: ref.Size, ExpectTableID: ref.TableID})
		if openErr == nil {
			r.Close()
		}
		switch {
		case identityErr == nil:
		case !errors.Is(identityErr, base.ErrCorruption):
			t.Errorf("%s: CheckIdentity: %v does not wrap ErrCorruption", what, identityErr)
		case openErr == nil:
			t.Errorf("%s: CheckIdentity refused (%v), Open accepted", what, identityErr)
		case openErr.Error() != identityErr.Error():
			t.Errorf("%s: CheckIdentity says\n\t%v\nOpen says\n\t%v", what, identityErr, openErr)
		}
		return identityErr
	}
	for i, data := range tables {
		size := uint64(len(data))
		ref := TableRef{FileNum: 7, Size: size, TableID: id + uint64(i)}
		if err := check(fmt.Sprintf("table %d", i), data, ref); err != nil {
			t.Errorf("table %d: %v", i, err)
		}
		for _, n := range []uint64{0, 10, footerLen, size - footerLen, size - 1} {
			for _, want := range []uint64{size, 0} {
				r := ref
				r.Size = want
				if err := check(fmt.Sprintf("table %d cut to %d, expected %d bytes", i, n, want), data[:n], r); err == nil {
					t.Errorf("table %d cut to %d bytes passes CheckIdentity", i, n)
				}
			}
		}
		other := tables[(i+1)%len(tables)]
		for _, want := range []uint64{size, 0} {
			r := ref
			r.Size = want
			if err := check(fmt.Sprintf("table %d's file in table %d's place", (i+1)%len(tables), i), other, r); err == nil {
				t.Errorf("table %d in table %d's place passes CheckIdentity", (i+1)%len(tables), i)
			}
		}
		// A footer that lost its filter handle, checksummed anew: the
		// properties still describe a filter.
		noFilter := bytes.Clone(data)
		ft := noFilter[size-footerLen:]
		clear(ft[16:32])
		putLE32(ft[52:], crc32Castagnoli(ft[:52]))
		if hasFilter := !bytes.Equal(ft[16:32], data[size-footerLen+16:size-footerLen+32]); hasFilter {
			if err := check(fmt.Sprintf("table %d without its filter handle", i), noFilter, ref); err == nil {
				t.Errorf("table %d: a footer without the filter the properties describe passes CheckIdentity", i)
			}
		}
		f := &countingFile{memFile: memFile{data: data}}
		props, err := CheckIdentity(f, ref)
		if err != nil {
			t.Fatal(err)
		}
		if f.reads != 1 {
			t.Errorf("table %d: CheckIdentity made %d reads; want one", i, f.reads)
		}
		tailStart := size - footerLen - propsBlockLen(t, data)
		// Every byte of the tail, a sample of the rest.
		for off := uint64(0); off < size; off += max(1, min(97, tailStart-off)) {
			flipped := bytes.Clone(data)
			flipped[off] ^= 1 << (off % 8)
			err := check(fmt.Sprintf("table %d, bit flipped at %d", i, off), flipped, ref)
			switch {
			case off >= tailStart && err == nil:
				t.Errorf("table %d: a bit flipped at %d, in the properties block or footer (from %d), passes CheckIdentity", i, off, tailStart)
			case off < tailStart && err != nil:
				t.Errorf("table %d: a bit flipped at %d, before the properties block (at %d), fails CheckIdentity: %v", i, off, tailStart, err)
			}
		}
		if props.TableID != ref.TableID || props.FileSize != size {
			t.Errorf("table %d: CheckIdentity returned id %#x, size %d; want %#x, %d", i, props.TableID, props.FileSize, ref.TableID, size)
		}
	}
}

// propsBlockLen is the length of data's properties block with its
// trailer, from the footer.
func propsBlockLen(t *testing.T, data []byte) uint64 {
	ft, err := decodeFooter(data[len(data)-footerLen:], uint64(len(data)-footerLen))
	if err != nil {
		t.Fatal(err)
	}
	if ft.props.end() != uint64(len(data)-footerLen) {
		t.Fatalf("properties block [%d, %d) does not end at the footer (%d)", ft.props.offset, ft.props.end(), len(data)-footerLen)
	}
	return ft.props.length + blockTrailerLen
}

// TestCheckIdentityLargeProperties: a properties block that does not fit
// in the tail CheckIdentity reads at once (it holds the smallest and
// largest keys, here of 5,000 bytes) is read apart, and checked all the
// same.
func TestCheckIdentityLargeProperties(t *testing.T) {
	uk := randBytes(newRand(9), 5000)
	data, _ := buildTable(t, []entry{{base.MakeInternalKey(uk, 1, base.KindSet), []byte("v")}}, WriterOptions{TableID: 5})
	n := propsBlockLen(t, data)
	if n+footerLen <= identityTail {
		t.Fatalf("properties block of %d bytes fits in the first read of %d", n, identityTail)
	}
	ref := TableRef{FileNum: 3, Size: uint64(len(data)), TableID: 5}
	f := &countingFile{memFile: memFile{data: data}}
	if _, err := CheckIdentity(f, ref); err != nil {
		t.Fatal(err)
	}
	if f.reads != 2 {
		t.Errorf("CheckIdentity made %d reads; want two", f.reads)
	}
	data[len(data)-footerLen-int(n)+1] ^= 1
	if _, err := CheckIdentity(&memFile{data: data}, ref); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "properties block") {
		t.Fatalf("properties block damaged outside the first read: %v", err)
	}
}

// countingFile counts its reads.
type countingFile struct {
	memFile
	reads int
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	return f.memFile.ReadAt(p, off)
}
