package sqlstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestTurnsMergeSmallBlocks: on PostgreSQL each turn inserts its rows as
// a new code block rather than rewriting the day's last one; merging the
// small blocks keeps a day of single-row turns in full blocks, and the
// raw pass over them counts exactly the reference.
func TestTurnsMergeSmallBlocks(t *testing.T) {
	// Not parallel: SetCompactAlways changes every store of the binary.
	s := openStore(t, sqltest.PostgresDSN(t))
	sqlstore.SetCompactAlways(t)
	const turns = 1100
	var log []analytics.Interaction
	for k := range turns {
		i := sampleLog(1, k)[0] // an api row of CAT alpha
		i.Time = day0.Add(time.Duration(k) * time.Second)
		log = append(log, i)
		turn(t, s, []analytics.Interaction{i})
	}
	var blocks []struct {
		Rows int64 `bun:"row_count"`
	}
	if err := s.DB().NewSelect().TableExpr("dims_blocks").Column("row_count").
		Where("cat = ?", "alpha").OrderExpr("row_count DESC").Scan(t.Context(), &blocks); err != nil {
		t.Fatal(err)
	}
	// Every turn merged the day's small blocks: one full block and one
	// with the rest.
	if len(blocks) != 2 || blocks[0].Rows != 1024 || blocks[1].Rows != turns-1024 {
		t.Errorf("the day's blocks hold %v rows, want [1024 %d]", blocks, turns-1024)
	}
	expectMatchesReference(t, "raw", s, normalized(log))
}
