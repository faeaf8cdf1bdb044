package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// bulkLog returns n sampleLog interactions with long answers, so that a
// few thousand of them outgrow the writer's page cache.
func bulkLog(n, salt int) []analytics.Interaction {
	in := sampleLog(n, salt)
	filler := strings.Repeat("x", 600)
	for k := range in {
		in[k].Answer = fmt.Sprintf("answer %d. %s", k%4, filler)
		in[k].UserID = fmt.Sprintf("user %d", k)
	}
	return in
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	return fi.Size()
}

// headerMode reads the journal mode the file's header records (bytes 18
// and 19: 2 in WAL mode, 1 with a rollback journal), without opening a
// connection, whose own WAL request would switch the file back itself.
func headerMode(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], 18); err != nil {
		t.Fatalf("reading the header: %v", err)
	}
	switch b {
	case [2]byte{2, 2}:
		return "wal"
	case [2]byte{1, 1}:
		return "rollback"
	}
	return fmt.Sprintf("unknown %v", b)
}

// TestLoadWritesPastTheLog: Load on a SQLite file it has to itself writes
// the pages into the file, not into the write-ahead log (which Append
// fills with the whole import), stores what Append stores, and leaves the
// file in WAL mode for what follows.
func TestLoadWritesPastTheLog(t *testing.T) {
	t.Parallel() // own stores only
	in := bulkLog(40_000, 0)
	ref := normalized(in)
	for _, load := range []bool{false, true} {
		t.Run(fmt.Sprintf("load=%v", load), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bulk.db")
			s := openStore(t, "sqlite:"+path)
			put := s.Append
			if load {
				put = s.Load
			}
			if n, err := put(t.Context(), analytics.Each(in)); err != nil || n != len(in) {
				t.Fatalf("= %d, %v; want %d", n, err, len(in))
			}
			db, wal := fileSize(t, path), fileSize(t, path+"-wal")
			if db < 16<<20 {
				t.Fatalf("database file %d bytes: the input is too small to tell", db)
			}
			if inLog := wal > db/2; inLog == load {
				t.Errorf("load=%v: log %d bytes beside a file of %d", load, wal, db)
			}
			if _, err := os.Stat(path + "-journal"); !os.IsNotExist(err) {
				t.Errorf("a rollback journal is left: %v", err)
			}
			if got := headerMode(t, path); got != "wal" {
				t.Errorf("journal mode after: %s, want wal", got)
			}
			expectMatchesReference(t, "raw", s, ref)
			expectMatchesReference(t, "rollups", s.Rollups(), ref)

			// What follows writes as before, through the log.
			more := sampleLog(50, 3)
			mustAppend(t, s, more)
			all := append(ref, normalized(more)...)
			expectMatchesReference(t, "raw after", s, all)
			expectMatchesReference(t, "rollups after", s.Rollups(), all)
			if got := fileSize(t, path+"-wal"); got == 0 {
				t.Error("the Append after the Load wrote no log")
			}
		})
	}
}

// TestLoadBesideAnotherConnection: while another process's connection has
// the file open, Load cannot have it alone; it does not wait for it, and
// writes through the log as Append does, visible to the other.
func TestLoadBesideAnotherConnection(t *testing.T) {
	t.Parallel() // own stores only
	path := filepath.Join(t.TempDir(), "shared.db")
	other := openStore(t, "sqlite:"+path)
	if err := other.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s := openStore(t, "sqlite:"+path)
	in := bulkLog(5_000, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // the busy timeout is 30 s
	defer cancel()
	if n, err := s.Load(ctx, analytics.Each(in)); err != nil || n != len(in) {
		t.Fatalf("Load = %d, %v; want %d", n, err, len(in))
	}
	if db, wal := fileSize(t, path), fileSize(t, path+"-wal"); wal < db/2 {
		t.Errorf("log %d bytes beside a file of %d: the Load did not go through the log", wal, db)
	}
	if got := headerMode(t, path); got != "wal" {
		t.Errorf("journal mode: %s, want wal", got)
	}
	expectMatchesReference(t, "raw, the other's view", other, normalized(in))
}

// TestLoadCancelled: a Load whose context is cancelled half-way, with its
// pages in the file under the journal, stores nothing and still leaves the
// file in WAL mode; the store writes on.
func TestLoadCancelled(t *testing.T) {
	t.Parallel() // own stores only
	path := filepath.Join(t.TempDir(), "cancelled.db")
	s := openStore(t, "sqlite:"+path)
	before := sampleLog(100, 4)
	mustAppend(t, s, before)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	journalled := false
	rows := func(yield func(analytics.Interaction, error) bool) {
		for k := 0; ; k++ {
			if fileSize(t, path+"-journal") > 0 && fileSize(t, path) > 32<<20 {
				journalled = true
				cancel()
			}
			for _, i := range bulkLog(1000, k) {
				if !yield(i, nil) {
					return
				}
			}
		}
	}
	if _, err := s.Load(ctx, rows); err == nil {
		t.Fatal("the cancelled Load succeeded")
	}
	if !journalled {
		t.Fatal("the Load was not under a journal when cancelled")
	}
	if got := headerMode(t, path); got != "wal" {
		t.Errorf("journal mode after the cancelled Load: %s, want wal", got)
	}
	more := sampleLog(30, 5)
	mustAppend(t, s, more)
	ref := append(normalized(before), normalized(more)...)
	expectMatchesReference(t, "raw", s, ref)
	expectMatchesReference(t, "rollups", s.Rollups(), ref)
}

// loadChildEnv names the database a child test process loads into until
// it is killed (TestLoadKilled).
const loadChildEnv = "SQLSTORE_LOAD_KILLED_DB"

// TestLoadKilled: a process killed (SIGKILL) in the middle of a Load that
// has the file to itself, with pages of the load already in the file,
// leaves a database that opens, in WAL mode, intact, with exactly what was
// committed before the Load.
func TestLoadKilled(t *testing.T) {
	t.Parallel() // own stores only
	if path := os.Getenv(loadChildEnv); path != "" {
		loadUntilKilled(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), "killed.db")
	before := sampleLog(500, 2)
	s, err := sqlstore.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustAppend(t, s, before)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	start := fileSize(t, path) + fileSize(t, path+"-wal")

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestLoadKilled$", "-test.count=1")
	cmd.Env = append(os.Environ(), loadChildEnv+"="+path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the child: %v", err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for fileSize(t, path) < start+64<<20 || fileSize(t, path+"-journal") == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the child's Load did not grow the file past %d bytes under a journal (now %d):\n%s", start+64<<20, fileSize(t, path), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	_ = cmd.Wait()

	reopened := openStore(t, "sqlite:"+path)
	if err := reopened.Ping(t.Context()); err != nil {
		t.Fatalf("Ping after the kill: %v", err)
	}
	var check string
	if err := reopened.DB().QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	if got := headerMode(t, path); got != "wal" {
		t.Errorf("journal mode after the kill: %s, want wal", got)
	}
	if got := fileSize(t, path); got > start+16<<20 {
		t.Errorf("file of %d bytes after the rollback, %d before the Load", got, start)
	}
	ref := normalized(before)
	expectMatchesReference(t, "raw", reopened, ref)
	expectMatchesReference(t, "rollups", reopened.Rollups(), ref)
}

// loadUntilKilled is the child of TestLoadKilled: it Loads rows into the
// database at path without end.
func loadUntilKilled(t *testing.T, path string) {
	s := openStore(t, "sqlite:"+path)
	rows := func(yield func(analytics.Interaction, error) bool) {
		for k := 0; ; k++ {
			for _, i := range bulkLog(1000, k) {
				if !yield(i, nil) {
					return
				}
			}
		}
	}
	_, err := s.Load(t.Context(), rows)
	t.Fatalf("Load returned: %v", err)
}
