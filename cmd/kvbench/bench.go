package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// bench is one DB under test: the one built with one setting, or its copy
// opened with filters ignored.
type bench struct {
	ctx        context.Context // done on Ctrl-C: the workloads stop
	cfg        *config
	setting        // what the DB is built with
	repeat     int // which -repeat run, from 1
	dir        string
	db         *lsm.DB
	watch      *levelWatch // the tables db writes per level (window.go)
	files      *tableReads // db's file system (tablereads.go)
	keys       keySpace
	vals       *valueSource
	filtersOff bool
	// dirBytesAtOpen is the directory's bytes when runAll opened the DB,
	// before its first workload (deleterange reports it).
	dirBytesAtOpen int64
	rep            *reporter
	stderr         io.Writer
}

func (b *bench) options() *lsm.Options {
	bits := b.bits
	if bits == 0 {
		bits = -1 // lsm: 0 is "default", negative is "none"
	}
	cache := b.cfg.cacheSize
	if cache <= 0 {
		cache = -1 // lsm: 0 is "default", negative is "no cache"
	}
	maxOpen := b.cfg.openFiles
	if maxOpen < 0 {
		maxOpen = math.MaxInt
	}
	compression := lsm.SnappyCompression
	if b.cfg.compression == "none" {
		compression = lsm.NoCompression
	}
	return &lsm.Options{
		Compression:       compression,
		MemtableSize:      b.cfg.writeBufferSize,
		BloomBitsPerKey:   bits,
		FilterSizing:      b.sizing,
		FilterScope:       b.scope,
		BlockCacheSize:    cache,
		MaxOpenFiles:      maxOpen,
		Sync:              b.cfg.sync,
		KeepAbsentDeletes: b.cfg.keepAbsentDeletes,
		IgnoreFilters:     b.filtersOff,
		Split:             b.cfg.split(),
		RangeFilter:       b.cfg.rangeFilter(),
		FS:                b.files,
		TargetFileSize:    b.cfg.targetFileSize,

		TargetFileSizeMultiplier: b.cfg.fileSizeMult,
		PinnedMetaLimit:          b.cfg.pinnedMeta,
		LBaseMaxBytes:            b.cfg.levelBase,
		EventListener:            b.watch.listener(),
	}
}

// open opens the DB and then every table in it (DB.Tables reads each
// table's properties), so the run starts with every index and filter in
// memory, as in a DB that has served reads for a while (all of them stay
// there unless -open_files limits the tables open). Without that the
// absent-key proof of Delete treats a table nobody has opened yet as
// "maybe" and elides nothing.
func (b *bench) open() (err error) {
	b.watch = &levelWatch{}
	b.files = &tableReads{FS: vfs.Default}
	if b.db, err = lsm.Open(b.dir, b.options()); err != nil {
		return err
	}
	_, err = b.db.Tables()
	return err
}

// errInterrupted is returned when ctx is done (Ctrl-C) before the run
// finished; the temporary DB is removed all the same.
var errInterrupted = errors.New("interrupted")

// runBenchmarks is the default command: for each setting (config.settings)
// and each of the -repeat runs, a DB built with it and every -benchmarks
// workload run on it in order. Each repeat builds the DB afresh, so the
// repeats are independent samples of the whole sequence;
// with -use_existing_db there is nothing to rebuild from, so every repeat
// runs on the DB as the one before left it. When ctx is done the workload
// under way stops at its next op, and the temporary directory is removed
// before runBenchmarks returns errInterrupted.
func runBenchmarks(ctx context.Context, c *config, stdout, stderr io.Writer) (err error) {
	if err := c.checkPaths(stderr); err != nil {
		if errors.Is(err, errUsage) { // printed here, as parseConfig prints its own
			fmt.Fprintf(stderr, "kvbench: %v\n", err)
			usageHint(stderr, "", "[flags]")
		}
		return err
	}
	rep := newReporter(c, stdout)
	root := c.db
	if root == "" {
		if root, err = os.MkdirTemp("", "kvbench-"); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(root)) }()
	}
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	settings := c.settings()
	if c.db != "" && len(settings) > 1 {
		if err := checkSweepRoot(c, settings); err != nil {
			return err
		}
	}
	rep.header(root)
	for _, s := range settings {
		dir := root
		if len(settings) > 1 {
			dir = filepath.Join(root, c.settingDir(s))
		}
		for repeat := 1; repeat <= c.repeat; repeat++ {
			b := &bench{ctx: ctx, cfg: c, setting: s, repeat: repeat, dir: dir,
				keys: c.keys(), vals: newValueSource(c.valueSize, c.compressionRatio, c.seed),
				rep: rep, stderr: stderr}
			rep.startRepeat(repeat)
			if err := b.runAll(); err != nil {
				return err
			}
		}
	}
	return rep.finish()
}

// checkSweepRoot refuses a -db directory for a sweep that holds anything
// but the setting directories this sweep builds in (each of which
// clearDB checks in turn): a sweep would add its directories beside, or
// inside a DB, whatever the directory held.
func checkSweepRoot(c *config, settings []setting) error {
	entries, err := os.ReadDir(c.db)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, s := range settings {
		ours[c.settingDir(s)] = true
	}
	for _, e := range entries {
		if !e.IsDir() || !ours[e.Name()] {
			return fmt.Errorf("%s holds %s, which is none of this sweep's DB directories: refusing to build there", c.db, e.Name())
		}
	}
	return nil
}

// runAll builds b's DB (unless -use_existing_db) and runs the workloads.
func (b *bench) runAll() (err error) {
	if !b.cfg.useExisting {
		replaced, err := clearDB(b.dir)
		if err != nil {
			return err
		}
		// Only a DB that was there before the run is news: later repeats
		// replace the one the first built.
		if replaced && b.repeat == 1 {
			advice := " (-use_existing_db runs on it instead)"
			if len(b.cfg.settings()) > 1 {
				advice = "" // a sweep rebuilds its DBs: -use_existing_db refuses one
			}
			fmt.Fprintf(b.stderr, "kvbench: replacing the monban DB in %s%s\n", b.dir, advice)
		}
	}
	if err := b.open(); err != nil {
		return err
	}
	if !b.cfg.useExisting {
		if err := writeKeyLayout(b.dir, b.keys); err != nil {
			return errors.Join(err, b.db.Close())
		}
	}
	if b.dirBytesAtOpen, err = dirBytes(b.dir); err != nil {
		return errors.Join(err, b.db.Close())
	}
	defer func() {
		if b.db != nil {
			err = errors.Join(err, b.db.Close())
		}
	}()
	for _, name := range b.cfg.benchmarks {
		if b.ctx.Err() != nil {
			return errInterrupted
		}
		on, off, err := b.runWorkload(name)
		if errors.Is(err, errInterrupted) {
			return errInterrupted
		}
		if err != nil {
			where := b.setting.String()
			if b.cfg.repeat > 1 {
				where += fmt.Sprintf(", repeat %d", b.repeat)
			}
			return fmt.Errorf("benchmark %s (%s): %w", name, where, err)
		}
		if on != nil {
			b.rep.result(on, off)
		}
	}
	return nil
}

// runWorkload settles the DB (window.go) and runs one workload, twice if
// it is compared: on and off are its records with filters on and off.
func (b *bench) runWorkload(name string) (on, off *record, err error) {
	if err := b.settle(); err != nil {
		return nil, nil, err
	}
	w := workloads[name]
	if w.compare && b.cfg.compare {
		return b.compared(name, w)
	}
	on, err = w.run(b, name)
	return on, nil, err
}

// compared runs w twice on the same data: on a copy of the DB's directory
// opened with Options.IgnoreFilters, then on the DB itself, reopened so
// that both runs start alike (cold block cache, WAL replayed, the same
// tables: the DB was settled before the copy). The operations are the
// same: they come from the same seeds.
func (b *bench) compared(name string, w workload) (on, off *record, err error) {
	if err := b.db.Close(); err != nil {
		return nil, nil, err
	}
	b.db = nil
	// Beside the DB, on its file system, in a directory of kvbench's own
	// making: one of a fixed name may be a user's.
	cp, err := os.MkdirTemp(filepath.Dir(b.dir), filepath.Base(b.dir)+".nofilters-")
	if err == nil {
		err = copyDir(b.dir, cp)
	}
	if err == nil {
		c := *b // c.open gives c its own levelWatch
		c.dir, c.filtersOff = cp, true
		if err = c.open(); err == nil {
			off, err = w.run(&c, name)
			err = errors.Join(err, c.db.Close())
		}
	}
	if cp != "" {
		err = errors.Join(err, os.RemoveAll(cp))
	}
	if openErr := b.open(); openErr != nil {
		return nil, nil, errors.Join(err, openErr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("filters off: %w", err)
	}
	on, err = w.run(b, name)
	return on, off, err
}

// copyDir copies the DB files of src (a flat directory; LOCK excepted)
// into dst, an empty directory.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// clearDB empties dir for a fresh build, as db_bench does, but only if it
// is absent, empty, or a monban DB no one has open: one that opens
// read-only (so not another engine's, nor locked by a running DB) and
// holds nothing but files of monban's names. kvbench never deletes a
// directory it cannot recognise. replaced reports that a DB was deleted.
func clearDB(dir string) (replaced bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case len(entries) == 0:
		return false, nil
	}
	for _, e := range entries {
		if _, _, ok := manifest.ParseFilename(e.Name()); (!ok && e.Name() != keyLayoutFile) || !e.Type().IsRegular() {
			return false, fmt.Errorf("%s holds %s, which is not a monban DB's: refusing to delete it", dir, e.Name())
		}
	}
	db, err := lsm.Open(dir, &lsm.Options{ReadOnly: true})
	if err != nil {
		return false, fmt.Errorf("%s is not a monban DB kvbench may replace: refusing to delete it: %w", dir, err)
	}
	if err := db.Close(); err != nil {
		return false, err
	}
	return true, os.RemoveAll(dir)
}

// checkPaths checks, before anything is made or run, what the run needs
// of the file system and would otherwise find out late: the DB that
// -use_existing_db runs on (lsm.Open would make a new one where there is
// none) and the keys it holds, and that the -svg chart, written after the
// last benchmark, and the -cpuprofile can be written. A path that cannot
// be written, or keys other than the flags ask for, are usage errors; a
// warning goes to stderr.
func (c *config) checkPaths(stderr io.Writer) error {
	if c.useExisting {
		if err := holdsDB(c.db); err != nil {
			return fmt.Errorf("-use_existing_db: %w", err)
		}
		warn := func(s string) { fmt.Fprintf(stderr, "kvbench: %s\n", s) }
		if err := checkKeyLayout(c.db, c.keys(), warn); err != nil {
			return err
		}
	}
	for _, p := range []struct{ flag, path string }{{"-svg", c.svg}, {"-cpuprofile", c.cpuProfile}} {
		if p.path == "" {
			continue
		}
		if err := writable(p.path); err != nil {
			return usageError("%s %s: %w", p.flag, p.path, err)
		}
	}
	return nil
}

// holdsDB reports, as an error naming dir, a directory in which lsm.Open
// would find no DB and make a new one: missing, empty, or holding no file
// of a DB's (one of monban's names, LOCK aside: it holds no data, and any
// Open leaves one). A directory that does hold such files is left to
// lsm.Open to judge; it refuses a damaged one rather than replace it.
func holdsDB(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no monban DB there: the directory does not exist", dir)
	case err != nil:
		return err
	case len(entries) == 0:
		return fmt.Errorf("%s: no monban DB there: the directory is empty", dir)
	}
	var names []string
	for _, e := range entries {
		if kind, _, ok := manifest.ParseFilename(e.Name()); ok && kind != manifest.KindLock {
			return nil
		}
		names = append(names, e.Name())
	}
	return fmt.Errorf("%s: no monban DB there: it holds no file of one (%s)", dir, listNames(names))
}

// writable reports why the file path cannot be created or written: path
// is a directory, or its directory is missing, not a directory, or does
// not let a file be made. It leaves nothing behind: the probe file it
// makes (when path does not exist yet) is removed.
func writable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // no O_TRUNC: not yet
		if err != nil {
			return err
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("directory %s does not exist", dir)
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".kvbench-svg-probe-*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	return errors.Join(f.Close(), os.Remove(f.Name()))
}

// listNames lists names for an error message: a few, then how many more.
func listNames(names []string) string {
	const shown = 6
	s := strings.Join(names[:min(len(names), shown)], " ")
	if len(names) > shown {
		s += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return s
}

// warm opens every table of the DB (see open).
func (b *bench) warm() error {
	_, err := b.db.Tables()
	return err
}

// startCPUProfile starts profiling the process's CPU into path; stop ends
// the profile and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
