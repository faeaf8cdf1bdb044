package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var day0 = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

// sampleLog returns n interactions over a few days and CATs with heavily
// shared rollup rows, and some non-api events.
func sampleLog(n, salt int) []analytics.Interaction {
	out := make([]analytics.Interaction, n)
	for k := range out {
		out[k] = analytics.Interaction{
			Time:      day0.Add(time.Duration(k*7919+salt) * time.Minute % (72 * time.Hour)),
			Cat:       []string{"alpha", "beta"}[k%2],
			EventKind: []string{"api", "api", "api", "feedback"}[k%4],
			Topic:     fmt.Sprintf("topic %d", k%3),
			Model:     fmt.Sprintf("model %d", k%2),
			Persona:   "student",
			Question:  fmt.Sprintf("question %d?", k%5),
			Answer:    fmt.Sprintf("answer %d.", k%4),
		}
		if k%7 == 0 {
			out[k].QuestionID = "Q-given"
		}
	}
	return out
}

// expectMatchesReference checks the aggregator's answers against the
// reference over ref, for a few selections.
func expectMatchesReference(t *testing.T, name string, agg ports.Aggregator, ref []analytics.Interaction) {
	t.Helper()
	for _, sel := range []analytics.Selection{
		{Cat: "alpha"},
		{Cat: "beta", Range: analytics.Range{Start: day0.AddDate(0, 0, 1)}},
		{Cat: "alpha", Filters: analytics.Filters{Topics: []string{"topic 1"}, QuestionIDs: []string{"Q-given", analytics.DeriveQuestionID("question 2?")}}},
	} {
		expectAnswer(t, name, agg, ref, sel)
	}
}

// expectAnswer checks the aggregator's answers to the selection's query,
// with each of the limits (without one and with a limit of 2 when none is
// given), against analytics.CountAnswer over ref.
func expectAnswer(t *testing.T, name string, agg ports.Aggregator, ref []analytics.Interaction, sel analytics.Selection, limits ...int) {
	t.Helper()
	if len(limits) == 0 {
		limits = []int{0, 2}
	}
	for _, limit := range limits {
		q := analytics.Query{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters, Limit: limit}
		got, err := agg.Answer(t.Context(), q, analytics.AllParts)
		if err != nil {
			t.Fatalf("%s Answer(%+v): %v", name, q, err)
		}
		want := analytics.CountAnswer(ref, q, analytics.AllParts)
		if got.Total != want.Total {
			t.Errorf("%s Answer(%+v): total %d, reference %d", name, q, got.Total, want.Total)
		}
		for _, d := range analytics.Dimensions {
			g, w := got.Groups[d], want.Groups[d]
			if q.LimitOf(d) == 0 {
				g, w = slices.Clone(g), slices.Clone(w)
				analytics.SortGroups(g)
				analytics.SortGroups(w)
			}
			if len(g) != len(w) || (len(w) > 0 && !slices.Equal(g, w)) {
				t.Errorf("%s Answer(%+v), list %v:\n got       %v\n reference %v", name, q, d, g, w)
			}
		}
	}
}

// totalOf is the total of the selection's answer from agg.
func totalOf(ctx context.Context, agg ports.Aggregator, sel analytics.Selection) (int64, error) {
	c, err := agg.Answer(ctx, analytics.Query{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters}, analytics.PartTotal)
	return c.Total, err
}

func normalized(in []analytics.Interaction) []analytics.Interaction {
	out := make([]analytics.Interaction, len(in))
	for k, i := range in {
		out[k] = i.Normalize()
	}
	return out
}

func mustAppend(t *testing.T, s *sqlstore.Store, in []analytics.Interaction) {
	t.Helper()
	n, err := s.Append(t.Context(), analytics.Each(in))
	if err != nil || n != len(in) {
		t.Fatalf("Append = %d, %v; want %d, nil", n, err, len(in))
	}
}

func TestSQLiteOpenCreatesDirectory(t *testing.T) {
	t.Parallel() // own stores only
	path := filepath.Join(t.TempDir(), "a", "b", "catsrv.db")
	s := openStore(t, "sqlite:"+path)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if got := s.Dialect(); got != sqlstore.DialectSQLite {
		t.Errorf("Dialect() = %q, want %q", got, sqlstore.DialectSQLite)
	}
}

func TestSQLiteInMemory(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, "sqlite::memory:")
	in := sampleLog(100, 0)
	mustAppend(t, s, in)
	expectMatchesReference(t, "raw", s, normalized(in))
	expectMatchesReference(t, "rollups", s.Rollups(), normalized(in))
}

func TestOpenRejectsBadDSN(t *testing.T) {
	t.Parallel() // own stores only
	cases := []struct {
		name string
		dsn  string
		kind errs.Kind
	}{
		{"Empty", "", errs.KindInvalid},
		{"MySQL", "mysql://user:s3cr3t@host/db", errs.KindInvalid},
		{"BarePath", "data/catsrv.db", errs.KindInvalid},
		{"SQLiteNoPath", "sqlite:", errs.KindInvalid},
		{"SQLite3Scheme", "sqlite3:data.db", errs.KindInvalid},
		{"PostgresBadPort", "postgres://user:s3cr3t@localhost:notaport/db", errs.KindInvalid},
		{"PostgresBadOption", "postgresql://user:s3cr3t@localhost/db?sslmode=sometimes", errs.KindInvalid},
		{"PostgresUnreachable", "postgres://user:s3cr3t@127.0.0.1:1/db?connect_timeout=2", errs.KindUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sqlstore.Open(t.Context(), c.dsn)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded", c.dsn)
			}
			if got := errs.KindOf(err); got != c.kind {
				t.Errorf("Open(%q) kind = %v, want %v (%v)", c.dsn, got, c.kind, err)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("Open error reveals the password: %v", err)
			}
			if c.kind == errs.KindInvalid && !strings.Contains(errs.PublicMessage(err, ""), "sqlite:PATH") &&
				!strings.Contains(errs.PublicMessage(err, ""), "PostgreSQL DSN") {
				t.Errorf("Open(%q) message %q names neither the accepted forms nor the problem", c.dsn, errs.PublicMessage(err, ""))
			}
		})
	}
}

func TestPing(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s, err := sqlstore.Open(t.Context(), b.DSN(t))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if err := s.Ping(t.Context()); err != nil {
				t.Errorf("Ping on an open store: %v", err)
			}
			want := map[string]string{"SQLite": sqlstore.DialectSQLite, "PostgreSQL": sqlstore.DialectPostgres}[b.Name]
			if got := s.Dialect(); got != want {
				t.Errorf("Dialect() = %q, want %q", got, want)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := s.Ping(t.Context()); errs.KindOf(err) != errs.KindUnavailable {
				t.Errorf("Ping on a closed store = %v, want kind unavailable", err)
			}
		})
	}
}

func TestRangeBoundPrecision(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := sampleLog(200, 0)
			mustAppend(t, s, in)
			ref := normalized(in)

			midday := analytics.Selection{Cat: "alpha", Range: analytics.Range{Start: day0.Add(12 * time.Hour), End: day0.Add(36*time.Hour + time.Microsecond)}}
			got, err := totalOf(t.Context(), s, midday)
			if err != nil {
				t.Fatalf("raw Total with non-midnight bounds: %v", err)
			}
			if want := analytics.CountTotal(ref, midday); got != want {
				t.Errorf("raw Total with non-midnight bounds = %d, reference %d", got, want)
			}
			for _, want := range []analytics.Parts{analytics.PartTotal, analytics.ListOf(analytics.Topic), analytics.ListOf(analytics.Question), analytics.AllParts} {
				q := analytics.Query{Cat: midday.Cat, Range: midday.Range}
				if _, err := s.Rollups().Answer(t.Context(), q, want); errs.KindOf(err) != errs.KindInvalid {
					t.Errorf("rollups Answer(%b) with non-midnight bounds: err = %v, want kind invalid", want, err)
				}
			}
			nano := analytics.Selection{Cat: "alpha", Range: analytics.Range{End: day0.Add(time.Nanosecond)}}
			if _, err := totalOf(t.Context(), s, nano); errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("raw Total with a sub-microsecond bound: err = %v, want kind invalid", err)
			}
			local := analytics.Selection{Cat: "alpha", Range: analytics.Range{Start: day0.AddDate(0, 0, 1).In(time.FixedZone("UTC+9", 9*60*60))}}
			got, err = totalOf(t.Context(), s.Rollups(), local)
			if err != nil {
				t.Fatalf("rollups Total with a UTC midnight in another zone: %v", err)
			}
			if want := analytics.CountTotal(ref, local); got != want {
				t.Errorf("rollups Total with a UTC midnight in another zone = %d, reference %d", got, want)
			}
		})
	}
}
