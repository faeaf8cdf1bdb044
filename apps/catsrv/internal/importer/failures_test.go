package importer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/importer"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

// failAfter reads its input, then fails.
type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

// hookReader calls hook once it has delivered after bytes.
type hookReader struct {
	r     io.Reader
	after int
	hook  func()
	read  int
}

func (h *hookReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p[:min(len(p), 4096)])
	h.read += n
	if h.hook != nil && h.read >= h.after {
		h.hook()
		h.hook = nil
	}
	return n, err
}

func TestImportNothingOnFailure(t *testing.T) {
	input := join(lines(interactions(2000)))
	boom := errors.New("disk on fire")
	tests := []struct {
		name  string
		input func(cancel context.CancelFunc) io.Reader
		skip  bool
		want  error
	}{
		{name: "reader fails midway", input: func(context.CancelFunc) io.Reader {
			return &failAfter{r: strings.NewReader(input[:len(input)/2]), err: boom}
		}, want: boom},
		{name: "reader fails midway with skip-invalid", skip: true, input: func(context.CancelFunc) io.Reader {
			return &failAfter{r: strings.NewReader(input[:len(input)/2]), err: boom}
		}, want: boom},
		{name: "context cancelled before", input: func(cancel context.CancelFunc) io.Reader {
			cancel()
			return strings.NewReader(input)
		}, want: context.Canceled},
		{name: "context cancelled midway", input: func(cancel context.CancelFunc) io.Reader {
			return &hookReader{r: strings.NewReader(input), after: len(input) / 2, hook: cancel}
		}, want: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store := memstore.New()
			rep, err := importer.Run(ctx, importer.Options{Log: store, Cats: directory(), Input: tt.input(cancel), SkipInvalid: tt.skip})
			if !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
			if rep.Imported != 0 {
				t.Errorf("Imported = %d", rep.Imported)
			}
			assertStored(t, store, nil)
		})
	}
}

func TestImportDirectoryFailure(t *testing.T) {
	down := errs.New(errs.KindUnavailable, "directory down")
	cats := &mocks.CatDirectoryMock{CatFunc: func(context.Context, string) (catconfig.Cat, error) {
		return catconfig.Cat{}, down
	}}
	store := memstore.New()
	_, err := importer.Run(context.Background(), importer.Options{Log: store, Cats: cats,
		Input: strings.NewReader(join(lines(interactions(10)))), SkipInvalid: true})
	if !errors.Is(err, down) {
		t.Errorf("error = %v, want the directory's", err)
	}
	assertStored(t, store, nil)
}

func TestImportLooksUpEachCatOnce(t *testing.T) {
	var lookups atomic.Int64
	dir := directory()
	cats := &mocks.CatDirectoryMock{CatFunc: func(ctx context.Context, name string) (catconfig.Cat, error) {
		lookups.Add(1)
		return dir.Cat(ctx, name)
	}}
	ls := lines(interactions(1000))
	ls[500] = strings.Replace(ls[500], `"cat":"demo"`, `"cat":"nope"`, 1)
	ls[700] = strings.Replace(ls[700], `"cat":"demo"`, `"cat":"nope"`, 1)
	rep, err := importer.Run(context.Background(), importer.Options{Log: memstore.New(), Cats: cats,
		Input: strings.NewReader(join(ls)), SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 998 || rep.Skipped != 2 {
		t.Errorf("imported %d, skipped %d; want 998 and 2", rep.Imported, rep.Skipped)
	}
	if n := lookups.Load(); n != 3 {
		t.Errorf("%d CAT lookups, want 3 (demo, other, nope)", n)
	}
}

// tickingClock moves a second forward each time it is read.
type tickingClock struct{ now time.Time }

func (c *tickingClock) Now() time.Time {
	c.now = c.now.Add(time.Second)
	return c.now
}

func TestImportProgress(t *testing.T) {
	bad := lines(interactions(200))
	bad[10] = "not json"
	tests := []struct {
		name  string
		input string
		skip  bool
		every time.Duration
		end   string
		line  *regexp.Regexp
		count int
	}{
		{name: "every second", input: join(lines(interactions(200))), every: time.Second,
			line: regexp.MustCompile(`^imported \d+ lines \(1 lines/s\)\n$`), count: 200},
		{name: "carriage return", input: join(lines(interactions(200))), every: time.Second, end: "\r",
			line: regexp.MustCompile(`^imported \d+ lines \(1 lines/s\)\r$`), count: 200},
		{name: "default interval is a second", input: join(lines(interactions(200))),
			line: regexp.MustCompile(`^imported \d+ lines \(1 lines/s\)\n$`), count: 200},
		{name: "at most every ten seconds", input: join(lines(interactions(200))), every: 10 * time.Second,
			line: regexp.MustCompile(`^imported \d+ lines \(1 lines/s\)\n$`), count: 20},
		{name: "invalid lines", input: join(bad), every: 100 * time.Second,
			line: regexp.MustCompile(`^read \d+ lines, 1 invalid \(1 lines/s\)\n$`), count: 2},
		{name: "skipped lines", input: join(bad), skip: true, every: 100 * time.Second,
			line: regexp.MustCompile(`^imported \d+ lines, skipped 1 \(1 lines/s\)\n$`), count: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, _ = importer.Run(context.Background(), importer.Options{Log: memstore.New(), Cats: directory(),
				Input: strings.NewReader(tt.input), SkipInvalid: tt.skip, Progress: &out, ProgressEvery: tt.every,
				ProgressEnd: tt.end, Clock: &tickingClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}})
			end := "\n"
			if tt.end != "" {
				end = tt.end
			}
			got := strings.SplitAfter(out.String(), end)
			got = got[:len(got)-1] // after the last line end
			if len(got) != tt.count {
				t.Fatalf("%d progress lines, want %d: %q", len(got), tt.count, out.String())
			}
			for _, l := range got {
				if !tt.line.MatchString(l) {
					t.Errorf("progress line %q does not match %s", l, tt.line)
				}
			}
		})
	}
}

func TestImportNeedsItsPorts(t *testing.T) {
	_, err := importer.Run(context.Background(), importer.Options{Cats: directory(), Input: strings.NewReader("")})
	if err == nil {
		t.Error("Run without a log succeeded")
	}
}

func BenchmarkRun(b *testing.B) {
	const n = 100000
	input := join(lines(interactions(n)))
	for b.Loop() {
		rep, err := importer.Run(context.Background(), importer.Options{Log: memstore.New(), Cats: directory(),
			Input: strings.NewReader(input)})
		if err != nil || rep.Imported != n {
			b.Fatalf("imported %d: %v", rep.Imported, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
