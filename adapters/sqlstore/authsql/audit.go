package authsql

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/auth"
)

// Record appends an audit event.
func (s *Store) Record(ctx context.Context, e auth.AuditEvent) error {
	row := auditRow{At: micros(e.Time), Kind: string(e.Kind), UserID: e.UserID, Provider: e.Provider, Cat: e.Cat,
		IP: e.IP, UserAgent: e.UserAgent, Reason: e.Reason}
	if _, err := s.db.NewInsert().Model(&row).Exec(ctx); err != nil {
		return internal(err)
	}
	return nil
}

// Events returns the selected audit events, oldest first.
func (s *Store) Events(ctx context.Context, f auth.AuditFilter) ([]auth.AuditEvent, error) {
	var rows []auditRow
	q := s.db.NewSelect().Model(&rows).Order("at", "seq")
	if !f.Since.IsZero() {
		q = q.Where("at >= ?", micros(f.Since))
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, internal(err)
	}
	out := make([]auth.AuditEvent, 0, len(rows))
	for _, r := range rows {
		out = append(out, auth.AuditEvent{Time: fromMicros(r.At), Kind: auth.AuditKind(r.Kind), UserID: r.UserID,
			Provider: r.Provider, Cat: r.Cat, IP: r.IP, UserAgent: r.UserAgent, Reason: r.Reason})
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
