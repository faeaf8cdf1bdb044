package sqlstore

import (
	"context"
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
)

// AnalyticsSteps is how many schema steps the analytics component has.
var AnalyticsSteps = len(analyticsMigrations)

// OpenAtVersion opens the database with its analytics schema brought only
// to the given version, as an older release left it.
func OpenAtVersion(ctx context.Context, dsn string, version int) (*Store, error) {
	return open(ctx, dsn, analyticsMigrations[:version])
}

// InsertVersion1 stores raw rows as version 1 of the schema did: no
// dictionary codes in the rows (and, here, no rollups).
func InsertVersion1(ctx context.Context, s *Store, rows []analytics.Interaction) error {
	cols := rawColumns[:len(rawColumns)-1]
	for _, i := range rows {
		i = i.Normalize()
		//nolint:gosec // fixed SQL text; the values are bound
		query := "INSERT INTO interactions (" + strings.Join(cols, ", ") + ") VALUES " + s.dialect.valuesClause(1, len(cols))
		if _, err := s.db.DB.ExecContext(ctx, query, s.dialect.timeArg(i.Time), i.Cat, i.EventKind, i.Question, i.Answer,
			i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID, i.UserID, i.ConversationID); err != nil {
			return err
		}
	}
	return nil
}
