package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/auth"
)

// auditCmd prints the authentication audit log, oldest first.
func auditCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	fs := newFlags("audit")
	config.AddFlags(fs.FlagSet, "db")
	since := fs.String("since", "", "only events since: a duration back from now (24h), a date (2026-01-31) or an RFC 3339 time")
	user := fs.String("user", "", "only events of this user id")
	limit := fs.Int("limit", 0, "print at most this many events (0: all)")
	asJSON := fs.Bool("json", false, "print JSON Lines instead of a table")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *limit < 0 {
		return fs.misuse("audit takes only flags")
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return fs.misuse("--since: %v", err)
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	store, err := sqlstore.Open(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	records, err := authsql.Open(ctx, store)
	if err != nil {
		return err
	}
	events, err := records.Events(ctx, auth.AuditFilter{Since: from, UserID: *user, Limit: *limit})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeAuditJSON(stdout, events)
	}
	return writeAuditTable(stdout, events)
}

// parseSince reads --since.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a duration, a YYYY-MM-DD date or an RFC 3339 time", s)
}

// writeAuditTable prints the events as a table, one line each. The fields
// come from anyone (a user agent, a provider's error text in a callback
// URL), so each is escaped by printable: no field can end its line, move
// the cursor or talk to the terminal.
func writeAuditTable(w io.Writer, events []auth.AuditEvent) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(tw, "TIME\tEVENT\tUSER\tPROVIDER\tCAT\tIP\tREASON\tUSER AGENT"); err != nil {
		return err
	}
	for _, e := range events {
		if _, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339),
			printable(string(e.Kind)), dash(e.UserID), dash(e.Provider), dash(e.Cat), dash(e.IP), dash(e.Reason), dash(e.UserAgent)); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// dash is a table field: printable, "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return printable(s)
}

// printable writes visibly every character of s that a terminal would not
// show as itself: C0 controls (tab, CR and LF included) and DEL as \xNN,
// C1 controls, Unicode format characters (bidi overrides such as U+202E,
// zero-width characters, U+FEFF), the line and paragraph separators
// U+2028 and U+2029, and any other character that is not graphic as
// \uNNNN, and a byte that is not UTF-8 as \xNN. A backslash is doubled, so
// text cannot pose as an escape.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == '\\' || !unicode.IsGraphic(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == ' ' || unicode.IsGraphic(r):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// auditLine is one event of --json output. encoding/json escapes control
// characters (and U+2028, U+2029), so each event stays one line of valid
// JSON; the values are the stored ones, unchanged.
type auditLine struct {
	Time      time.Time `json:"time"`
	Event     string    `json:"event"`
	User      string    `json:"user,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Cat       string    `json:"cat,omitempty"`
	IP        string    `json:"ip,omitempty"`
	UserAgent string    `json:"user_agent,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

func writeAuditJSON(w io.Writer, events []auth.AuditEvent) error {
	enc := json.NewEncoder(w)
	for _, e := range events {
		if err := enc.Encode(auditLine{Time: e.Time.UTC(), Event: string(e.Kind), User: e.UserID, Provider: e.Provider,
			Cat: e.Cat, IP: e.IP, UserAgent: e.UserAgent, Reason: e.Reason}); err != nil {
			return err
		}
	}
	return nil
}
