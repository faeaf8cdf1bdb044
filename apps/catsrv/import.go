package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/debug"
	"strings"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/importer"
	"github.com/catsrv/catsrv/core/analytics"
)

// importGCPercent is the import's garbage-collection target (Go's default
// is 100).
const importGCPercent = 400

// importMemLimit is the import's soft memory limit (GOMEMLIMIT) when the
// operator sets none: with GOGC at 400 the heap could grow to five times
// what is live, so the limit keeps the peak RSS flat whatever the input's
// length. SQLite gets less, since its page cache and other allocations
// are outside the Go heap.
const (
	importMemLimit       = 160 << 20
	importMemLimitSQLite = 64 << 20
)

// importMemoryLimit is the soft memory limit of an import into db.
func importMemoryLimit(db string) int64 {
	if strings.HasPrefix(db, "sqlite:") {
		return importMemLimitSQLite
	}
	return importMemLimit
}

func importCmd(ctx context.Context, args []string, env environ, stdin io.Reader, stderr io.Writer) error {
	fs := newFlags("import")
	config.AddFlags(fs.FlagSet, "config", "db")
	skipInvalid := fs.Bool("skip-invalid", false, "import the valid lines and report the invalid ones")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fs.misuse("import takes one FILE or - for standard input")
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	input := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name) // #nosec G304 -- the operator names the file to import
		if err != nil {
			return err
		}
		defer f.Close()
		input = f
	}

	cats, err := loadCats(cfg)
	if err != nil {
		return err
	}
	if cfg.GOGC == "" {
		// An import keeps little alive (a few batches) but allocates for
		// every line: collecting a quarter as often leaves the cores to
		// decoding and writing. GOGC, when set, wins.
		debug.SetGCPercent(importGCPercent)
	}
	if cfg.GOMEMLIMIT == "" {
		debug.SetMemoryLimit(importMemoryLimit(cfg.DB))
	}
	store, err := sqlstore.Open(ctx, cfg.DB, sqlstore.BulkWrites())
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()

	opts := importer.Options{Log: loader{store}, Cats: cats, Input: input, SkipInvalid: *skipInvalid, Clock: clock.System{}}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	report, err := importer.Run(ctx, opts)
	if err != nil {
		return err
	}
	if err := store.Optimize(ctx); err != nil {
		return fmt.Errorf("updating planner statistics: %w", err)
	}
	rate := 0.0
	if s := report.Elapsed.Seconds(); s > 0 {
		rate = float64(report.Imported) / s
	}
	fmt.Fprintf(stderr, "imported %d interactions in %s (%.0f lines/s)\n", report.Imported, report.Elapsed.Round(1e6), rate)
	if report.Skipped > 0 {
		fmt.Fprintf(stderr, "skipped %d invalid lines:\n", report.Skipped)
		for _, bad := range report.Invalid {
			fmt.Fprintf(stderr, "  %s\n", bad)
		}
		if more := report.InvalidCount - len(report.Invalid); more > 0 {
			fmt.Fprintf(stderr, "  ... and %d more\n", more)
		}
	}
	return nil
}

// loader hands the importer's one Append to the store's Load, which on a
// SQLite file the import has to itself writes past the write-ahead log.
type loader struct{ *sqlstore.Store }

func (l loader) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	return l.Load(ctx, interactions)
}

// isTerminal reports whether w is a character device (a terminal), where
// progress lines are welcome.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
