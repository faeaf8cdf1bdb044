package reporter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/catconfig"
)

// A Go program can use the analytics core as a library, with the in-memory
// adapter standing in for a database.
func Example() {
	ctx := context.Background()
	store := memstore.New()
	at := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	log := []analytics.Interaction{
		{Time: at, Cat: "shop", EventKind: "api", Question: "Where is my order?", Answer: "Track it under Orders.", Topic: "shipping", Model: "gpt-4o", Persona: "customer"},
		{Time: at, Cat: "shop", EventKind: "api", Question: "Where is my order?", Answer: "Track it under Orders.", Topic: "shipping", Model: "gpt-4o-mini", Persona: "customer"},
		{Time: at, Cat: "shop", EventKind: "api", Question: "Can I get a refund?", Answer: "Yes, within 30 days.", Topic: "billing", Model: "gpt-4o", Persona: "customer"},
		{Time: at, Cat: "shop", EventKind: "feedback", Question: "-", Answer: "-", Topic: "billing", Model: "gpt-4o", Persona: "customer"},
	}
	if _, err := store.Append(ctx, analytics.Each(log)); err != nil {
		panic(err)
	}
	rep := reporter.New(memstore.NewCats(catconfig.Defaults("shop")), store, store, clock.System{})

	q, _, err := rep.Resolve(ctx, reporter.Request{
		Cat: "shop", StartDate: "2024-05-01", EndDate: "2024-06-01",
		Filters: analytics.Filters{Models: []string{"gpt-4o"}},
	})
	if err != nil {
		panic(err)
	}
	res, err := rep.All(ctx, q)
	if err != nil {
		panic(err)
	}
	fmt.Println("total:", res.TotalInteractions)
	for _, t := range res.TopicCounts {
		fmt.Printf("topic %s: %d (%.2f%%)\n", t.Topic, t.Count, t.Percentage)
	}
	for _, m := range res.ModelCounts {
		fmt.Printf("model %s: %d\n", m.Membership, m.Count)
	}
	// Output:
	// total: 2
	// topic billing: 1 (50.00%)
	// topic shipping: 1 (50.00%)
	// model gpt-4o: 2
	// model gpt-4o-mini: 1
}
