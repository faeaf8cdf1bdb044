package colindex

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
)

// Hold counts at once the api rows a write of this process has just
// committed, so that the writer's caller reads its own write when it
// returns: the store calls it after each commit (sqlstore's TellCommits).
// givenAt is the feed position from which the feed has given the rows: a
// refresh that has reached it counted them already, and Hold does
// nothing; otherwise the rows are counted and remembered by id (given),
// so that the feed's later read drops them (and a refresh whose position
// passes them without the feed giving them, erased in between, rebuilds
// their CAT: dropDeleted). Without its rows (complete
// false: an import too long to hand over), Hold refreshes instead.
func (x *Index) Hold(rows []analytics.FeedRow, givenAt int64, complete bool) {
	if !complete {
		_ = x.Refresh(context.Background()) // committed already: Follow catches up and reports
		return
	}
	if len(rows) == 0 {
		return
	}
	x.turn.Lock()
	defer x.turn.Unlock()
	if x.high >= givenAt {
		return
	}
	b := batch{cats: map[string]*catDraft{}, ratings: true}
	if x.given == nil {
		x.given = make(map[int64]givenRow, len(rows))
	}
	for i := range rows {
		r := &rows[i]
		b.add(x.cats, r)
		x.given[r.ID] = givenRow{cat: string(r.Cat), at: givenAt, rated: r.Rating}
	}
	x.apply(&b)
	x.sortUnsorted()
}
