package sqlstore

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/catsrv/catsrv/core/errs"
)

// sessionSettings are the PostgreSQL settings the SQL text of this
// package relies on. bun writes values into the statement text as
// standard string literals ('…' with quotes doubled): they are safe only
// while standard_conforming_strings is on, since with it off a backslash
// before a quote escapes it and a value can end its literal early. The
// others fix how values are read and how days are cut, whatever the
// database's, the role's or the DSN's defaults say.
var sessionSettings = [...]struct{ name, value string }{
	{"standard_conforming_strings", "on"},
	{"client_encoding", "UTF8"},
	{"DateStyle", "ISO, MDY"},
	{"IntervalStyle", "postgres"},
	{"TimeZone", "UTC"},
}

// forceSessionSettings makes every connection start with the settings:
// startup parameters override the database's and the role's defaults,
// and the server applies them after (so they win over) the "-c" switches
// of a DSN's "options". The DSN's own values for them are dropped.
func forceSessionSettings(cfg *pgx.ConnConfig) {
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for name := range cfg.RuntimeParams {
		for _, s := range sessionSettings {
			if strings.EqualFold(name, s.name) {
				delete(cfg.RuntimeParams, name)
			}
		}
	}
	for _, s := range sessionSettings {
		cfg.RuntimeParams[s.name] = s.value
	}
}

// checkSessionSettings runs on every new connection before it is used:
// it refuses the connection (so Open fails, and a pool never hands it
// out) unless the server reports every setting as forced. A connection
// pooler or proxy that drops startup parameters is caught here.
func checkSessionSettings(ctx context.Context, conn *pgx.Conn) error {
	// One statement for all of them: a new connection costs one round
	// trip here, not one per setting.
	names := make([]string, len(sessionSettings))
	for k, s := range sessionSettings {
		names[k] = s.name
	}
	var got []string
	if err := conn.QueryRow(ctx, "SELECT array_agg(current_setting(name) ORDER BY k) FROM unnest($1::text[]) WITH ORDINALITY AS s(name, k)", names).Scan(&got); err != nil {
		// The connection was lost while it opened (a server that
		// ends sessions): temporary, the client may try again.
		return errs.Wrap(errs.KindUnavailable, errs.Temporary(err), "reading the PostgreSQL session settings failed")
	}
	if len(got) != len(sessionSettings) {
		return errs.New(errs.KindUnavailable, "reading the PostgreSQL session settings returned %d of %d", len(got), len(sessionSettings))
	}
	for k, s := range sessionSettings {
		if !strings.EqualFold(got[k], s.value) {
			return errs.New(errs.KindUnavailable,
				"PostgreSQL session setting %s is %q and could not be set to %q: catsrv refuses connections that do not have it",
				s.name, got[k], s.value)
		}
	}
	return nil
}
