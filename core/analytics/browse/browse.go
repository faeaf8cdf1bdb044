// Package browse serves the chat-log view: the interactions behind an
// analytics query page by page, a bounded export of them, and their daily
// counts. Requests are validated by the reporter (reporter.Resolve); this
// package only reads, through the InteractionBrowser port.
package browse

import (
	"context"
	"iter"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// exportPage is how many entries an export reads from the store at a time.
const exportPage = 500

// errUnconfigured answers when the service was built without a store.
var errUnconfigured = errs.New(errs.KindInternal, "no chat log store is configured")

// Service answers chat-log requests.
type Service struct {
	store ports.InteractionBrowser
}

// New returns a service reading from store.
func New(store ports.InteractionBrowser) *Service { return &Service{store: store} }

// List returns one page of the query's interactions (every filter applied).
func (s *Service) List(ctx context.Context, q analytics.Query, page chatlog.Page) (chatlog.Listing, error) {
	if err := page.Check(); err != nil {
		return chatlog.Listing{}, err
	}
	if s.store == nil {
		return chatlog.Listing{}, errUnconfigured
	}
	sel, ok := chatlog.Storable(q.Selection())
	if !ok {
		return chatlog.Listing{}, nil
	}
	l, err := s.store.List(ctx, sel, page)
	if err != nil {
		return chatlog.Listing{}, wrapStore(err)
	}
	return l, nil
}

// Export yields up to max of the query's interactions after the position,
// newest first, of the review queue when one is given, reading the store
// a page at a time so that memory stays bounded whatever the size of the
// log. It stops at the first error.
func (s *Service) Export(ctx context.Context, q analytics.Query, after chatlog.Position, max int, review ...chatlog.Review) iter.Seq2[chatlog.Entry, error] {
	var rv chatlog.Review
	if len(review) > 0 {
		rv = review[0]
	}
	return func(yield func(chatlog.Entry, error) bool) {
		sent := 0
		for sent < max {
			l, err := s.List(ctx, q, chatlog.Page{After: after, Limit: min(exportPage, max-sent), Review: rv})
			if err != nil {
				yield(chatlog.Entry{}, err)
				return
			}
			for _, e := range l.Entries {
				if !yield(e, nil) {
					return
				}
				sent++
			}
			if l.Next.IsZero() {
				return
			}
			after = l.Next
		}
	}
}

// Daily returns the query's interactions per UTC day (every filter
// applied), oldest first, days without any left out.
func (s *Service) Daily(ctx context.Context, q analytics.Query) ([]chatlog.DayCount, error) {
	if s.store == nil {
		return nil, errUnconfigured
	}
	sel, ok := chatlog.Storable(q.Selection())
	if !ok {
		return nil, nil
	}
	d, err := s.store.Daily(ctx, sel)
	if err != nil {
		return nil, wrapStore(err)
	}
	return d, nil
}

func wrapStore(err error) error {
	if errs.KindOf(err) != errs.KindInternal {
		return err
	}
	return errs.Wrap(errs.KindInternal, err, "chat log store failed")
}
