package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// hostileStrings end a standard string literal early when a backslash
// escapes the quote (standard_conforming_strings off).
var hostileStrings = []string{
	`x\' OR 1=1 --`,
	`\'; CREATE TABLE injected_marker(a int); --`,
	`\\'`,
	`a\'b`,
	`C:\temp\'s`,
	`\`,
	`' OR '1'='1`,
}

// hostileDSN is a database whose default turns standard_conforming_strings
// off, reached through a DSN that turns it off again (both ways an
// operator could).
func hostileDSN(t *testing.T) string {
	dsn := sqltest.PostgresDatabaseDSN(t, map[string]string{"standard_conforming_strings": "off", "TimeZone": "'America/New_York'"})
	return dsn + "&options=-c%20standard_conforming_strings%3Doff&standard_conforming_strings=off"
}

// TestPostgresSessionSettingsForced: whatever the database and the DSN
// say, every connection of the store runs with the settings its SQL text
// relies on, and values that would escape a literal with them off are
// stored and filtered exactly.
func TestPostgresSessionSettingsForced(t *testing.T) {
	t.Parallel() // own stores only
	dsn := hostileDSN(t)
	ctx := t.Context()

	// The database really is hostile for a client that forces nothing.
	raw, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close(context.Background()) }()
	var scs string
	if err := raw.QueryRow(ctx, "SHOW standard_conforming_strings").Scan(&scs); err != nil || scs != "off" {
		t.Fatalf("test database: standard_conforming_strings = %q (%v), want off", scs, err)
	}

	s := sqltest.Open(t, dsn)
	// Hold several connections at once, so each is a separate session.
	conns := make([]interface{ Close() error }, 0, 3)
	for range 3 {
		c, err := s.DB().DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		for _, want := range [][2]string{{"standard_conforming_strings", "on"}, {"TimeZone", "UTC"}, {"DateStyle", "ISO, MDY"}} {
			var got string
			if err := c.QueryRowContext(ctx, "SELECT current_setting($1)", want[0]).Scan(&got); err != nil || got != want[1] {
				t.Errorf("connection: %s = %q (%v), want %q", want[0], got, err, want[1])
			}
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}

	var log []analytics.Interaction
	for k, h := range hostileStrings {
		log = append(log, analytics.Interaction{
			Time: day0.Add(time.Duration(k) * time.Hour), Cat: "alpha", EventKind: analytics.EventKindAPI,
			Topic: h, Model: "m" + h, Persona: h, Question: "q " + h, Answer: h + " a",
		})
	}
	log = append(log, sampleLog(40, 3)...)
	if _, err := s.Append(ctx, analytics.Each(log)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	ref := normalized(log)
	for _, h := range hostileStrings {
		for _, sel := range []analytics.Selection{
			{Cat: "alpha", Filters: analytics.Filters{Topics: []string{h}}},
			{Cat: "alpha", Filters: analytics.Filters{Models: []string{"m" + h, "model 1"}, Personas: []string{h, "student"}}},
			{Cat: "alpha", Filters: analytics.Filters{QuestionIDs: []string{h, analytics.DeriveQuestionID("q " + h)}}},
			{Cat: h},
		} {
			for name, agg := range map[string]ports.Aggregator{"raw": s, "rollups": s.Rollups()} {
				expectAnswer(t, name, agg, ref, sel)
			}
		}
	}
	var marker int
	if err := raw.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'injected_marker'").Scan(&marker); err != nil || marker != 0 {
		t.Errorf("injected table exists: %d (%v)", marker, err)
	}
}

// TestPostgresRefusesUnforcedSession: a connection whose settings are not
// the forced ones (as behind a pooler that drops startup parameters) is
// refused with a message naming the setting.
func TestPostgresRefusesUnforcedSession(t *testing.T) {
	t.Parallel() // own stores only
	dsn := hostileDSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	err = sqlstore.CheckSessionSettings(t.Context(), conn)
	if err == nil || !strings.Contains(err.Error(), "standard_conforming_strings") {
		t.Fatalf("CheckSessionSettings on an unforced session = %v, want a refusal naming standard_conforming_strings", err)
	}
	if _, err := conn.Exec(t.Context(), "SET standard_conforming_strings = on"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.CheckSessionSettings(t.Context(), conn); err != nil {
		t.Fatalf("CheckSessionSettings on a forced session: %v", err)
	}
}
