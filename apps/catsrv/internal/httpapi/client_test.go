package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"

	"github.com/catsrv/catsrv/client"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestGeneratedClient calls every analytics route through the generated
// client and compares the answers with the core's reference.
func TestGeneratedClient(t *testing.T) {
	e := NewEnv(t)
	srv := httptest.NewServer(e.Handler)
	defer srv.Close()
	withToken := func(token string) *client.ClientWithResponses {
		c, err := client.NewClientWithResponses(srv.URL, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if token != "" {
				r.Header.Set("Authorization", Bearer(token))
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	admin, anonymous := withToken(e.Admin), withToken("")
	ctx := context.Background()
	start, end := "2024-01-11", "2024-03-01"
	var limit int64 = 2
	models := []string{"gpt-a", "gpt-b"}
	topics := []string{"billing", "shipping"}
	full := Params{Cat: PrivateCat, Start: start, End: end, Filters: analytics.Filters{Models: models, Topics: topics}, Limit: int(limit)}
	plain := Params{Cat: PrivateCat, Start: start, End: end}
	listed := Params{Cat: PrivateCat, Start: start, End: end, Limit: int(limit)}

	// check compares a typed answer with the route's reference body.
	check := func(t *testing.T, route string, p Params, status int, got any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		AssertJSON(t, b, RouteSpecs[route].Body(Reference(t, p)))
	}

	t.Run("/all_warehouse", func(t *testing.T) {
		r, err := admin.GetAllWarehouseWithResponse(ctx, &client.GetAllWarehouseParams{
			Catname: PrivateCat, StartDate: &start, EndDate: &end, Model: &models, Topic: &topics, Limit: &limit})
		check(t, "/all_warehouse", full, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/all", func(t *testing.T) {
		r, err := admin.GetAllWithResponse(ctx, &client.GetAllParams{
			Catname: PrivateCat, StartDate: &start, EndDate: &end, Model: &models, Topic: &topics, Limit: &limit})
		check(t, "/all", full, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/all_legacy", func(t *testing.T) {
		r, err := admin.GetAllLegacyWithResponse(ctx, &client.GetAllLegacyParams{
			Catname: PrivateCat, StartDate: &start, EndDate: &end, Model: &models, Topic: &topics, Limit: &limit})
		check(t, "/all_legacy", full, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/metrics/topic_counts", func(t *testing.T) {
		r, err := admin.GetTopicCountsWithResponse(ctx, &client.GetTopicCountsParams{Catname: PrivateCat, StartDate: &start, EndDate: &end})
		check(t, "/metrics/topic_counts", plain, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/metrics/model_counts", func(t *testing.T) {
		r, err := admin.GetModelCountsWithResponse(ctx, &client.GetModelCountsParams{Catname: PrivateCat, StartDate: &start, EndDate: &end})
		check(t, "/metrics/model_counts", plain, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/metrics/total_interactions", func(t *testing.T) {
		r, err := admin.GetTotalInteractionsWithResponse(ctx, &client.GetTotalInteractionsParams{Catname: PrivateCat, StartDate: &start, EndDate: &end})
		check(t, "/metrics/total_interactions", plain, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/questions", func(t *testing.T) {
		r, err := admin.GetQuestionsWithResponse(ctx, &client.GetQuestionsParams{Catname: PrivateCat, StartDate: &start, EndDate: &end, Limit: &limit})
		check(t, "/questions", listed, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/answers", func(t *testing.T) {
		r, err := admin.GetAnswersWithResponse(ctx, &client.GetAnswersParams{Catname: PrivateCat, StartDate: &start, EndDate: &end, Limit: &limit})
		check(t, "/answers", listed, r.StatusCode(), r.JSON200, err)
	})
	t.Run("/get_cats", func(t *testing.T) {
		r, err := anonymous.GetCatsWithResponse(ctx)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		if len(r.JSON200.Cats) != 1 || r.JSON200.Cats[0].Name != PublicCat || !r.JSON200.Cats[0].AnalyticsPublic {
			t.Errorf("anonymous cats: %+v", r.JSON200.Cats)
		}
	})
	t.Run("errors are typed", func(t *testing.T) {
		r, err := anonymous.GetAllWithResponse(ctx, &client.GetAllParams{Catname: PrivateCat})
		if err != nil || r.JSON401 == nil || r.JSON401.Error != "UNAUTHORIZED" {
			t.Errorf("anonymous on a private CAT: %v %d %s", err, r.StatusCode(), r.Body)
		}
		r, err = admin.GetAllWithResponse(ctx, &client.GetAllParams{Catname: "nope"})
		if err != nil || r.JSON500 == nil || r.JSON500.Error != base.AnalyticsErrorCode {
			t.Errorf("unknown CAT: %v %d %s", err, r.StatusCode(), r.Body)
		}
		r, err = admin.GetAllWithResponse(ctx, &client.GetAllParams{Catname: ""})
		if err != nil || r.JSON422 == nil || len(r.JSON422.Detail) != 1 || r.JSON422.Detail[0].Type != "value_error.missing" {
			t.Errorf("empty catname: %v %d %s", err, r.StatusCode(), r.Body)
		}
	})
	t.Run("health", func(t *testing.T) {
		h, err := anonymous.GetHealthzWithResponse(ctx)
		if err != nil || h.JSON200 == nil || h.JSON200.Status != client.Ok {
			t.Errorf("healthz: %v %s", err, h.Body)
		}
		r, err := anonymous.GetReadyzWithResponse(ctx)
		if err != nil || r.JSON200 == nil || r.JSON200.Status != client.Ready {
			t.Errorf("readyz: %v %s", err, r.Body)
		}
	})
}
