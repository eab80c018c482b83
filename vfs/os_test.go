package vfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lockChildEnv, when set, turns the test binary into a child process that
// tries to take the lock it names and prints what happened.
const lockChildEnv = "MONBAN_VFS_LOCK_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(lockChildEnv); name != "" {
		l, err := Default.Lock(name)
		switch {
		case err == nil:
			l.Close()
			fmt.Println("acquired")
		case errors.Is(err, ErrLocked):
			fmt.Println("locked")
		default:
			fmt.Println("error:", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockFromChild re-executes the test binary to try the lock from another
// process.
func lockFromChild(t *testing.T, name string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestOSLockOtherProcess: invariant 3 across processes; the in-process
// half is in the conformance suite (TestLock).
func TestOSLockOtherProcess(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := Default.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := lockFromChild(t, name); got != "locked" {
		t.Fatalf("child while the lock is held: %q, want locked", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lockFromChild(t, name); got != "acquired" {
		t.Fatalf("child after release: %q, want acquired", got)
	}
}
