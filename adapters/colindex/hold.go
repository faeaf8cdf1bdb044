package colindex

import (
	"context"

	"github.com/catsrv/catsrv/ports"
)

// Hold counts the rows a write of this process has just committed
// (ports.CommitTeller) at once, so the writer's caller reads its own
// write when it returns, without waiting for a refresh that reads them
// back. It does nothing when a refresh has given them already (the index's
// position is at c.GivenAt or beyond); otherwise the rows become visible
// under one hold of the write lock and are remembered by id, so that the
// feed's later read drops them (as the rows of the snapshot the index
// started from); rows erased before Hold took them, which the feed will
// never give, are dropped once its position passes them (dropDeleted).
// A commit told without its rows (an import) is read from
// the feed by a refresh of its own. Hold waits for a refresh's apply,
// not for its read of the database (see Refresh); the new dictionary
// entries are ranked by the next refresh (until then queries order them
// themselves, see sortedGroups).
func (x *Index) Hold(c ports.Committed) {
	if !c.Complete {
		_ = x.Refresh(context.Background()) // committed already: Follow catches up and reports
		return
	}
	if len(c.Rows) == 0 {
		return
	}
	x.changeMu.Lock()
	defer x.changeMu.Unlock()
	if x.high >= c.GivenAt {
		return
	}
	b := batch{cats: map[string]*catDraft{}}
	if x.given == nil {
		x.given = make(map[int64]givenRow, len(c.Rows))
	}
	for i := range c.Rows {
		r := &c.Rows[i]
		b.add(x.cats, r)
		x.given[r.ID] = givenRow{cat: string(r.Cat), at: c.GivenAt}
	}
	b.prepare()
	x.apply(&b)
	x.sortUnsorted()
}
