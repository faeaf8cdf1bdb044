// Package importer implements `catsrv import`: it streams a JSON Lines file
// into the interaction log in one Append, so the import is all or nothing,
// without ever holding the whole input in memory.
package importer

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Options configures one import.
type Options struct {
	// Log receives the interactions, in a single Append.
	Log ports.InteractionLog
	// Cats decides which CAT names are known; a line naming another is invalid.
	Cats ports.CatDirectory
	// Input is read once, line by line.
	Input io.Reader
	// SkipInvalid imports the valid lines of an input that has invalid ones.
	// Without it, one invalid line means nothing is imported.
	SkipInvalid bool
	// Progress, when set, receives a progress line at most every
	// ProgressEvery (default one second).
	Progress      io.Writer
	ProgressEvery time.Duration
	// ProgressEnd ends each progress line: "\n" (the default), or "\r" to
	// redraw one terminal line.
	ProgressEnd string
	// Clock times the import; nil means the system clock.
	Clock ports.Clock
}

// Report says what an import did.
type Report struct {
	// Imported counts the interactions stored; 0 when Run fails.
	Imported int
	// Skipped counts the invalid lines left out with SkipInvalid.
	Skipped int
	// Invalid holds the first MaxKeptErrors invalid lines, in input order.
	Invalid []LineError
	// InvalidCount counts every invalid line.
	InvalidCount int
	// Elapsed is how long the import took.
	Elapsed time.Duration
}

// LineError is why one input line is invalid.
type LineError struct {
	Line int
	Err  error
}

// Error names the line and the problem.
func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the problem.
func (e LineError) Unwrap() error { return e.Err }

// MaxKeptErrors bounds Report.Invalid, so a file of garbage cannot exhaust
// memory; MaxNamedErrors bounds how many lines the error of a failed
// import names.
const (
	MaxKeptErrors  = 100
	MaxNamedErrors = 20
)

// Run imports opts.Input. When the input has invalid lines and SkipInvalid
// is off, it still reads to the end to name them all, imports nothing and
// returns an errs.KindInvalid error naming the first MaxNamedErrors lines
// with their reasons. A failing reader, a failing log or a cancelled
// context also import nothing.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Log == nil || opts.Cats == nil || opts.Input == nil {
		return Report{}, errs.New(errs.KindInternal, "importer: Log, Cats and Input are required")
	}
	s := newSession(opts)
	start := s.clock.Now()
	s.start, s.lastProgress = start, start
	n, err := opts.Log.Append(ctx, s.interactions(ctx))
	rep := Report{Invalid: s.invalid, InvalidCount: s.invalidCount, Elapsed: s.clock.Now().Sub(start)}
	if err != nil {
		return rep, err
	}
	rep.Imported = n
	if opts.SkipInvalid {
		rep.Skipped = s.invalidCount
	}
	return rep, nil
}

// maxCachedCats bounds the CAT lookup cache: a hostile file can name any
// number of distinct unknown CATs.
const maxCachedCats = 1024

// session is the state of one Run.
type session struct {
	opts    Options
	clock   ports.Clock
	every   time.Duration
	lineEnd string

	catChecked   map[string]error         // nil error: known CAT
	catConfs     map[string]catconfig.Cat // the known CATs checked, for their pricing
	read         int
	imported     int
	invalid      []LineError
	invalidCount int
	start        time.Time
	lastProgress time.Time
}

func newSession(opts Options) *session {
	s := &session{opts: opts, clock: opts.Clock, every: opts.ProgressEvery, lineEnd: opts.ProgressEnd,
		catChecked: map[string]error{}, catConfs: map[string]catconfig.Cat{}}
	if s.clock == nil {
		s.clock = clock.System{}
	}
	if s.every <= 0 {
		s.every = time.Second
	}
	if s.lineEnd == "" {
		s.lineEnd = "\n"
	}
	return s
}

// interactions is the sequence handed to Append. Once a line is invalid
// without SkipInvalid it stops yielding interactions (they would be rolled
// back anyway) but reads on to find every bad line, then yields the error
// that makes Append roll back.
func (s *session) interactions(ctx context.Context) iter.Seq2[analytics.Interaction, error] {
	return func(yield func(analytics.Interaction, error) bool) {
		for line := range jsonl.Decode(s.opts.Input) {
			if line.No == jsonl.ReadFailed {
				yield(analytics.Interaction{}, line.Err)
				return
			}
			s.read++
			if s.read%64 == 0 {
				if err := ctx.Err(); err != nil {
					yield(analytics.Interaction{}, err)
					return
				}
			}
			s.progress()
			err := line.Err
			if err == nil {
				var fatal error
				if err, fatal = s.checkCat(ctx, line.Interaction.Cat); fatal != nil {
					yield(analytics.Interaction{}, fatal)
					return
				}
			}
			if err != nil {
				s.addInvalid(line.No, err)
				continue
			}
			if s.invalidCount > 0 && !s.opts.SkipInvalid {
				continue
			}
			if !yield(s.priced(line.Interaction), nil) {
				return
			}
			s.imported++
		}
		if s.invalidCount > 0 && !s.opts.SkipInvalid {
			yield(analytics.Interaction{}, s.failure())
		}
	}
}

// checkCat returns why a CAT name makes a line invalid (nil if it is
// known), or a fatal error when the directory itself fails.
func (s *session) checkCat(ctx context.Context, name string) (invalid, fatal error) {
	if err, ok := s.catChecked[name]; ok {
		return err, nil
	}
	conf, err := s.opts.Cats.Cat(ctx, name)
	switch {
	case err == nil:
		if len(s.catConfs) < maxCachedCats {
			s.catConfs[name] = conf
		}
	case errs.KindOf(err) == errs.KindNotFound:
		shown := name
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		err = errs.New(errs.KindInvalid, "unknown CAT %q: not in the configuration", shown)
	default:
		return nil, err
	}
	if len(s.catChecked) < maxCachedCats {
		s.catChecked[name] = err
	}
	return err, nil
}

// priced returns the interaction with its cost computed from its CAT's
// pricing when it has none (catconfig.Cat.Priced).
func (s *session) priced(i analytics.Interaction) analytics.Interaction {
	if conf, ok := s.catConfs[i.Cat]; ok {
		return conf.Priced(i)
	}
	return i
}

func (s *session) addInvalid(no int, err error) {
	s.invalidCount++
	if len(s.invalid) < MaxKeptErrors {
		s.invalid = append(s.invalid, LineError{Line: no, Err: err})
	}
}

// failure is the error of an import refused for its invalid lines.
func (s *session) failure() error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d invalid %s, nothing imported (--skip-invalid imports the valid lines):",
		s.invalidCount, plural(s.invalidCount, "line", "lines"))
	for _, e := range s.invalid[:min(len(s.invalid), MaxNamedErrors)] {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	if more := s.invalidCount - MaxNamedErrors; more > 0 {
		fmt.Fprintf(&b, "\n  and %d more", more)
	}
	return errs.New(errs.KindInvalid, "%s", b.String())
}

// progress writes a progress line when ProgressEvery has passed since the
// last one. Write errors are ignored: a closed terminal must not abort an
// import.
func (s *session) progress() {
	if s.opts.Progress == nil {
		return
	}
	now := s.clock.Now()
	if now.Sub(s.lastProgress) < s.every {
		return
	}
	s.lastProgress = now
	rate := 0
	if secs := now.Sub(s.start).Seconds(); secs > 0 {
		rate = int(float64(s.read) / secs)
	}
	var msg string
	switch {
	case s.invalidCount == 0:
		msg = fmt.Sprintf("imported %d lines (%d lines/s)", s.imported, rate)
	case s.opts.SkipInvalid:
		msg = fmt.Sprintf("imported %d lines, skipped %d (%d lines/s)", s.imported, s.invalidCount, rate)
	default:
		msg = fmt.Sprintf("read %d lines, %d invalid (%d lines/s)", s.read, s.invalidCount, rate)
	}
	_, _ = io.WriteString(s.opts.Progress, msg+s.lineEnd)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
