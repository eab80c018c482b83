package wal_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// A log written through the file system, synced, and read back, then the
// same log with its last record torn off by a crash.
func Example() {
	fs := vfs.NewMem()
	name := filepath.Join("db", "000001.log")
	_ = fs.MkdirAll("db")
	f, _ := fs.Create(name)
	w := wal.NewWriter(f)
	for _, rec := range []string{"put cat=1", "put dog=2", "delete cat"} {
		off, _ := w.Append([]byte(rec))
		fmt.Printf("appended %q at offset %d\n", rec, off)
	}
	_ = w.Sync()
	_ = w.Close()

	f, _ = fs.Open(name)
	data, _ := io.ReadAll(f)
	for _, log := range [][]byte{data, data[:len(data)-4]} {
		r := wal.NewReader(bytes.NewReader(log), name)
		for {
			rec, err := r.Next()
			if err != nil {
				fmt.Printf("%v after offset %d, %d bytes dropped\n", err, r.Offset(), r.DroppedBytes())
				break
			}
			fmt.Printf("read %q\n", rec)
		}
	}
	// Output:
	// appended "put cat=1" at offset 0
	// appended "put dog=2" at offset 16
	// appended "delete cat" at offset 32
	// read "put cat=1"
	// read "put dog=2"
	// read "delete cat"
	// EOF after offset 32, 0 bytes dropped
	// read "put cat=1"
	// read "put dog=2"
	// EOF after offset 16, 13 bytes dropped
}

// A BufferedWriter acknowledges Appends from memory; Flush puts them in
// the file (a process crash keeps them), Sync on disk (a machine crash
// keeps them too), and Close writes whatever is left.
func ExampleBufferedWriter() {
	fs := vfs.NewMem()
	f, _ := fs.Create("000002.log")
	w := wal.NewBufferedWriter(f)
	for _, rec := range []string{"put cat=1", "put dog=2"} {
		off, _ := w.Append([]byte(rec))
		fmt.Printf("appended %q at offset %d\n", rec, off)
	}
	_ = w.Sync() // both records are durable
	_, _ = w.Append([]byte("delete cat"))
	fmt.Println("size", w.Size()) // counts the buffered record
	_ = w.Close()                 // writes it, does not sync

	f, _ = fs.Open("000002.log")
	r := wal.NewReader(f, "000002.log")
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		fmt.Printf("read %q at offset %d\n", rec, r.Offset())
	}
	// Output:
	// appended "put cat=1" at offset 0
	// appended "put dog=2" at offset 16
	// size 49
	// read "put cat=1" at offset 0
	// read "put dog=2" at offset 16
	// read "delete cat" at offset 32
}

// A recyclable log is told its number, and sealed when the next log takes
// over: a Reader told the same number stops at the seal, whatever the file
// holds after it (in a reused file, an older log's bytes).
func ExampleWriter_Seal() {
	fs := vfs.NewMem()
	f, _ := fs.Create("000007.log")
	w := wal.NewRecyclableWriter(f, 7)
	_, _ = w.Append([]byte("put cat=1"))
	_ = w.Seal() // appends the SEAL and syncs
	_, err := w.Append([]byte("put dog=2"))
	fmt.Println("append after Seal:", err)
	_ = w.Close()

	f, _ = fs.Open("000007.log")
	data, _ := io.ReadAll(f)
	older := bytes.Repeat([]byte{0xa5}, 100) // what a reused file might still hold
	r := wal.NewRecyclableReader(bytes.NewReader(append(data, older...)), "000007.log", 7)
	for {
		rec, err := r.Next()
		if err != nil {
			fmt.Printf("%v: sealed %v, ends cleanly %v, %d bytes dropped\n", err, r.Sealed(), r.EndsCleanly(), r.DroppedBytes())
			break
		}
		fmt.Printf("read %q\n", rec)
	}
	// Output:
	// append after Seal: wal: log sealed: closed
	// read "put cat=1"
	// EOF: sealed true, ends cleanly true, 0 bytes dropped
}
