//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

// Package unprivileged runs part of a test as a user that file permissions
// apply to. The tests often run as root, which reads and writes whatever
// the mode bits say, so a test of what a process without write permission
// can do means nothing until root is dropped: Run re-executes the test
// binary, running only the calling test, as nobody (uid and gid 65534).
//
// A test using it is written once and runs twice when root: in the parent
// Run calls setup and starts the child; in the child, which it recognises
// by an environment variable, it calls check alone.
package unprivileged

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// dirEnv carries the directory setup filled to the child, and marks it as
// the child.
const dirEnv = "MONBAN_UNPRIVILEGED_DIR"

// nobody is the uid and gid the child runs as: the traditional nobody,
// which owns no file the tests make.
const nobody = 65534

// Run makes a fresh directory every user can reach (in os.TempDir, removed
// when t ends, whatever modes setup left), calls setup to fill it and take
// away the permissions the test is about, then calls check on it as a user
// those permissions bind: in this process when it is not root, and
// otherwise in a re-run of the test binary as uid 65534, whose failure
// fails t with the child's output. t must be a top-level test: the child
// selects it by name.
func Run(t *testing.T, setup, check func(t *testing.T, dir string)) {
	t.Helper()
	if dir := os.Getenv(dirEnv); dir != "" {
		check(t, dir)
		return
	}
	root := reachableDir(t)
	dir := filepath.Join(root, "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	setup(t, dir)
	if os.Geteuid() != 0 {
		check(t, dir)
		return
	}
	exe := executable(t, root)
	cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	cmd.Env = append(os.Environ(), dirEnv+"="+dir)
	cmd.Dir = root // the package directory the test started in may be closed to nobody
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", t.Name(), nobody, err, out)
	}
	// A child that matched no test would pass too, having checked nothing.
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")) {
		t.Fatalf("%s as uid %d did not run the test:\n%s", t.Name(), nobody, out)
	}
}

// reachableDir returns a new directory of mode 0o755 in os.TempDir.
// t.TempDir's are 0o700, closed to every other user.
func reachableDir(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("", "monban-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Not root, RemoveAll cannot empty a directory setup made read-only.
		// WalkDir visits a directory before reading it, so it is opened up
		// in time.
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(root); err != nil {
			t.Error(err)
		}
	})
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// executable returns a path to the running test binary that nobody may
// execute: its own when every directory above it lets others through, or
// else a copy in root. go test builds binaries in a directory of mode
// 0o700.
func executable(t *testing.T, root string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if othersMayExecute(exe) {
		return exe
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(root, "test.bin")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// othersMayExecute reports whether a user who is neither name's owner nor
// in its group may execute it: its "other" execute bit and that of every
// directory on the way to it.
func othersMayExecute(name string) bool {
	p, err := filepath.EvalSymlinks(name)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(p)
		if parent == p {
			return true
		}
		p = parent
	}
}
