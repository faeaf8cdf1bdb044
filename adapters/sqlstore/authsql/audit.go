package authsql

import (
	"context"
	"strings"
	"time"

	"github.com/catsrv/catsrv/core/auth"
)

// Record appends an audit event.
func (s *Store) Record(ctx context.Context, e auth.AuditEvent) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO auth_audit (at, kind, user_id, provider, cat, ip, user_agent, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		micros(e.Time), string(e.Kind), e.UserID, e.Provider, e.Cat, e.IP, e.UserAgent, e.Reason); err != nil {
		return internal(err)
	}
	return nil
}

// events returns the selected audit events, oldest first.
func (s *Store) events(ctx context.Context, f auth.AuditFilter) ([]auth.AuditEvent, error) {
	var where []string
	var args []any
	if !f.Since.IsZero() {
		where = append(where, "at >= ?")
		args = append(args, micros(f.Since))
	}
	if f.UserID != "" {
		where = append(where, "user_id = ?")
		args = append(args, f.UserID)
	}
	q := `SELECT at, kind, user_id, provider, cat, ip, user_agent, reason FROM auth_audit`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY at, seq"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	out := []auth.AuditEvent{}
	for rows.Next() {
		var e auth.AuditEvent
		var at int64
		var kind string
		if err := rows.Scan(&at, &kind, &e.UserID, &e.Provider, &e.Cat, &e.IP, &e.UserAgent, &e.Reason); err != nil {
			return nil, internal(err)
		}
		e.Time, e.Kind = fromMicros(at), auth.AuditKind(kind)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}

// DefaultPruneBatch is how many audit rows one statement of Prune deletes
// when the caller names no batch size.
const DefaultPruneBatch = 1000

// Prune deletes the audit events older than before, oldest first, at most
// batch rows per statement. Each statement commits on its own (the pool
// runs it outside any transaction), so the table is locked only for one
// batch at a time; the index on at finds the rows.
func (s *Store) Prune(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	cut := micros(before)
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		res, err := s.db.ExecContext(ctx, `DELETE FROM auth_audit WHERE seq IN
			(SELECT seq FROM auth_audit WHERE at < ? ORDER BY at LIMIT ?)`, cut, batch)
		if err != nil {
			return total, internal(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, internal(err)
		}
		total += int(n)
		if n < int64(batch) {
			return total, nil
		}
	}
}
