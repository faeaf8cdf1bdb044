package sqlstore

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// WriteTx runs fn in one write transaction on the store's database and
// commits it when fn returns nil (rolls it back otherwise). It takes the
// same turn as Append (this process's SQLite writer queue, the per-schema
// advisory lock on PostgreSQL), so sibling adapters can write their own
// rows and interactions (AppendTx) all or nothing, and raw reads see the
// interactions as soon as WriteTx returns.
func (s *Store) WriteTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.dialect == sqliteDialect {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return internal(err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	if s.dialect == postgresDialect {
		// Native placeholders: the raw transaction, not bun's formatter.
		if _, err := tx.Tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))", lockAppend); err != nil {
			return internal(err)
		}
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return internal(err)
	}
	committed = true
	s.memo.Invalidate()
	return nil
}

// AppendTx validates and stores interactions, with their rollups, in tx, a
// transaction of WriteTx: the same rows and rollups Append writes. An
// invalid interaction is an errs.KindInvalid error naming its position
// (1-based); the caller's transaction then rolls back.
func (s *Store) AppendTx(ctx context.Context, tx bun.Tx, interactions []analytics.Interaction) error {
	normalized := make([]analytics.Interaction, 0, len(interactions))
	for n, i := range interactions {
		if err := i.Validate(); err != nil {
			return errs.New(errs.KindInvalid, "interaction %d: %s", n+1, errs.PublicMessage(err, "invalid"))
		}
		normalized = append(normalized, i.Normalize())
	}
	w := newWriter(ctx, tx.Tx, s.dialect)
	defer w.close()
	for start := 0; start < len(normalized); start += w.rawBatch {
		if err := w.write(normalized[start:min(len(normalized), start+w.rawBatch)]); err != nil {
			return err
		}
	}
	return w.flushDerived()
}
