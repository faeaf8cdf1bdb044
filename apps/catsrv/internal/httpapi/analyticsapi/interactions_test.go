package analyticsapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/ports"
)

// withBrowser serves the chat-log routes from the env's interaction log.
func withBrowser() EnvOption {
	return func(d *httpapi.Deps, log *ports.InteractionLog) {
		if b, ok := (*log).(ports.InteractionBrowser); ok {
			d.Browser = b
		}
	}
}

// listing is the reference chat log of p: the memory store numbers
// interactions from 1 in append order.
func listing(t *testing.T, p Params) []chatlog.Entry {
	t.Helper()
	rng, err := analytics.ParseRange(p.Start, p.End)
	if err != nil {
		t.Fatal(err)
	}
	var entries []chatlog.Entry
	for k, i := range Normalized() {
		entries = append(entries, chatlog.Entry{Interaction: i, Seq: int64(k) + 1})
	}
	sel := analytics.Selection{Cat: p.Cat, Range: rng, Filters: p.Filters}
	return chatlog.List(entries, sel, chatlog.Page{Limit: chatlog.MaxPageSize}).Entries
}

// entryJSON is an entry as /interactions shows it.
func entryJSON(e chatlog.Entry) map[string]any {
	return map[string]any{
		"time": e.Time.UTC().Format(time.RFC3339Nano), "question": e.Question, "answer": e.Answer,
		"topic": e.Topic, "model": e.Model, "persona": e.Persona, "question_id": e.QuestionID,
		"answer_id": e.AnswerID, "user_id": e.UserID, "conversation_id": e.ConversationID,
	}
}

var chatLogParams = []Params{
	{Cat: PrivateCat},
	{Cat: PrivateCat, Start: "2024-01-11", End: "2024-02-11"},
	{Cat: PrivateCat, Filters: analytics.Filters{Topics: []string{"billing"}, Models: []string{"gpt-a", "gpt-c"}}},
	{Cat: PrivateCat, Filters: analytics.Filters{QuestionIDs: []string{"q-address", analytics.DeriveQuestionID("How do I pay?")}}},
	{Cat: PrivateCat, Filters: analytics.Filters{Personas: []string{"casual"}, AnswerIDs: []string{analytics.DeriveAnswerID("Use the portal.")}}},
	{Cat: PrivateCat, Filters: analytics.Filters{Topics: []string{"nothing"}}},
	{Cat: PublicCat},
}

func TestInteractionsPagesMatchReference(t *testing.T) {
	e := NewEnv(t, withBrowser())
	for _, p := range chatLogParams {
		for _, size := range []int{1, 2, 50} {
			t.Run(p.Query()+"&limit="+strconv.Itoa(size), func(t *testing.T) {
				var got []map[string]any
				cursor := ""
				for pages := 0; ; pages++ {
					if pages > 20 {
						t.Fatal("paging never ends")
					}
					target := AnalyticsPrefix + "/interactions?" + p.Query() + "&limit=" + strconv.Itoa(size)
					if cursor != "" {
						target += "&cursor=" + url.QueryEscape(cursor)
					}
					r := e.Get(t, target, Bearer(e.Admin))
					if r.Status != http.StatusOK {
						t.Fatalf("status %d: %s", r.Status, r.Body)
					}
					var page struct {
						Interactions []map[string]any `json:"interactions"`
						NextCursor   *string          `json:"next_cursor"`
					}
					if err := json.Unmarshal(r.Body, &page); err != nil || page.Interactions == nil || page.NextCursor == nil {
						t.Fatalf("body %s: %v", r.Body, err)
					}
					if len(page.Interactions) > size || (*page.NextCursor != "" && len(page.Interactions) != size) {
						t.Fatalf("page of %d entries for size %d, next %q", len(page.Interactions), size, *page.NextCursor)
					}
					got = append(got, page.Interactions...)
					if cursor = *page.NextCursor; cursor == "" {
						break
					}
				}
				var want []map[string]any
				for _, en := range listing(t, p) {
					want = append(want, entryJSON(en))
				}
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(want)
				if !bytes.Equal(gotJSON, wantJSON) {
					t.Errorf("listing\n got %s\nwant %s", gotJSON, wantJSON)
				}
			})
		}
	}
}

func TestChatLogAccess(t *testing.T) {
	e := NewEnv(t, withBrowser())
	unauthorized := `{"error":"UNAUTHORIZED","status":401,"message":"missing bearer token"}`
	forbidden := `{"error":"FORBIDDEN","status":403,"message":"admin role required"}`
	cases := []struct {
		name, target, auth string
		status             int
		body               string
	}{
		{"public CAT listing needs a token", "/interactions?catname=" + PublicCat, "", 401, unauthorized},
		{"public CAT export needs a token", "/interactions/export?catname=" + PublicCat, "", 401, unauthorized},
		{"private CAT listing needs a token", "/interactions?catname=" + PrivateCat, "", 401, unauthorized},
		{"viewer cannot list", "/interactions?catname=" + PublicCat, Bearer(e.Viewer), 403, forbidden},
		{"viewer cannot export", "/interactions/export?catname=" + PrivateCat, Bearer(e.Viewer), 403, forbidden},
		{"daily of a public CAT is public", "/daily_counts?catname=" + PublicCat, "", 200, ""},
		{"daily of a private CAT needs a token", "/daily_counts?catname=" + PrivateCat, "", 401, unauthorized},
		{"daily of a private CAT needs an admin", "/daily_counts?catname=" + PrivateCat, Bearer(e.Viewer), 403, forbidden},
		{"admin lists", "/interactions?catname=" + PublicCat, Bearer(e.Admin), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Get(t, AnalyticsPrefix+c.target, c.auth)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.body != "" {
				assertMessageShape(t, r.Body, c.body)
			}
			if c.status == 401 && r.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

// assertMessageShape checks the error code and status of an error body;
// the message must be present, its wording is the token service's.
func assertMessageShape(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w struct {
		Error   string `json:"error"`
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if g.Error != w.Error || g.Status != w.Status || g.Message == "" || len(Keys(t, got)) != 3 {
		t.Errorf("body %s, want the shape of %s", got, want)
	}
}

func TestChatLogErrors(t *testing.T) {
	e := NewEnv(t, withBrowser())
	spec := func(msg string) string {
		b, _ := json.Marshal(map[string]any{"error": base.AnalyticsErrorCode, "status": 500, "message": msg})
		return string(b)
	}
	invalid := func(param, msg, typ string) string {
		b, _ := json.Marshal(map[string]any{"detail": []any{map[string]any{"loc": []string{"query", param}, "msg": msg, "type": typ}}})
		return string(b)
	}
	for _, route := range []string{"/interactions", "/interactions/export", "/daily_counts"} {
		cases := []struct {
			name, query string
			status      int
			body        string
		}{
			{"unknown CAT", "catname=nope", 500, spec(`CAT "nope" not found in configuration`)},
			{"bad start", "catname=" + PrivateCat + "&startDate=2024-13-01", 500,
				spec(`Invalid startDate format. Expected YYYY-MM-DD: parsing time "2024-13-01": month out of range`)},
			{"start not before end", "catname=" + PrivateCat + "&startDate=2024-02-01&endDate=2024-01-01", 500, spec("startDate must be before endDate")},
			{"missing catname", "", 422, invalid("catname", "field required", "value_error.missing")},
		}
		for _, c := range cases {
			t.Run(route+"/"+c.name, func(t *testing.T) {
				r := e.Get(t, AnalyticsPrefix+route+"?"+c.query, Bearer(e.Admin))
				if r.Status != c.status {
					t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
				}
				AssertJSON(t, r.Body, c.body)
			})
		}
	}
	for _, c := range []struct{ name, target, param string }{
		{"bad cursor", "/interactions?catname=" + PrivateCat + "&cursor=bm90LWEtY3Vyc29y", "cursor"},
		{"page size 0", "/interactions?catname=" + PrivateCat + "&limit=0", "limit"},
		{"page size too big", "/interactions?catname=" + PrivateCat + "&limit=1001", "limit"},
		{"unknown format", "/interactions/export?catname=" + PrivateCat + "&format=xlsx", "format"},
		{"export limit too big", "/interactions/export?catname=" + PrivateCat + "&limit=100001", "limit"},
		{"filter too long", "/interactions?catname=" + PrivateCat + "&topic=" + strings.Repeat("x", 4097), "topic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Get(t, AnalyticsPrefix+c.target, Bearer(e.Admin))
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var body base.ValidationError
			if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Detail) == 0 {
				t.Fatalf("body %s: %v", r.Body, err)
			}
			if loc := body.Detail[0].Loc; len(loc) < 2 || loc[0] != "query" || loc[1] != c.param {
				t.Errorf("loc %v, want query.%s", loc, c.param)
			}
		})
	}
	t.Run("without a browser", func(t *testing.T) {
		bare := NewEnv(t)
		r := bare.Get(t, AnalyticsPrefix+"/interactions?catname="+PrivateCat, Bearer(bare.Admin))
		if r.Status != 500 {
			t.Fatalf("status %d", r.Status)
		}
		AssertJSON(t, r.Body, spec("internal error"))
	})
}

func TestExportCSV(t *testing.T) {
	e := NewEnv(t, withBrowser())
	for _, p := range chatLogParams {
		t.Run(p.Query(), func(t *testing.T) {
			r := e.Get(t, AnalyticsPrefix+"/interactions/export?"+p.Query()+"&format=csv", Bearer(e.Admin))
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="`+p.Cat) || !strings.HasSuffix(cd, `_interactions.csv"`) {
				t.Errorf("Content-Disposition %q", cd)
			}
			want := listing(t, p)
			if got := r.Header.Get("X-Total-Count"); got != strconv.Itoa(len(want)) || r.Header.Get("X-Export-Truncated") != "false" {
				t.Errorf("X-Total-Count %q, X-Export-Truncated %q; want %d, false", got, r.Header.Get("X-Export-Truncated"), len(want))
			}
			records, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			wantRecords := [][]string{{"time", "question", "answer", "topic", "model", "persona", "question_id", "answer_id", "user_id", "conversation_id"}}
			for _, en := range want {
				wantRecords = append(wantRecords, []string{en.Time.Format(time.RFC3339Nano), en.Question, en.Answer, en.Topic, en.Model,
					en.Persona, en.QuestionID, en.AnswerID, en.UserID, en.ConversationID})
			}
			if !slices.EqualFunc(records, wantRecords, slices.Equal) {
				t.Errorf("CSV\n got %q\nwant %q", records, wantRecords)
			}
		})
	}
}

func TestExportJSONLReadsBackAsImport(t *testing.T) {
	e := NewEnv(t, withBrowser())
	for _, p := range chatLogParams {
		t.Run(p.Query(), func(t *testing.T) {
			r := e.Get(t, AnalyticsPrefix+"/interactions/export?"+p.Query()+"&format=jsonl", Bearer(e.Admin))
			if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("status %d, Content-Type %q: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			var got []analytics.Interaction
			for line := range jsonl.Decode(bytes.NewReader(r.Body)) {
				if line.Err != nil {
					t.Fatalf("line %d: %v", line.No, line.Err)
				}
				got = append(got, line.Interaction.Normalize())
			}
			want := listing(t, p)
			if len(got) != len(want) {
				t.Fatalf("%d lines, want %d", len(got), len(want))
			}
			for k := range want {
				if !got[k].Time.Equal(want[k].Time) || got[k].Cat != p.Cat || got[k].EventKind != analytics.EventKindAPI {
					t.Errorf("line %d = %+v, want %+v", k+1, got[k], want[k].Interaction)
				}
				got[k].Time = want[k].Time
				if got[k] != want[k].Interaction {
					t.Errorf("line %d = %+v, want %+v", k+1, got[k], want[k].Interaction)
				}
			}
		})
	}
}

func TestExportLimit(t *testing.T) {
	e := NewEnv(t, withBrowser())
	r := e.Get(t, AnalyticsPrefix+"/interactions/export?catname="+PrivateCat+"&format=csv&limit=2", Bearer(e.Admin))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	records, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := listing(t, Params{Cat: PrivateCat})
	if len(records) != 3 || records[1][1] != want[0].Question || records[2][1] != want[1].Question {
		t.Errorf("limited export %q, want the two newest of %d", records, len(want))
	}
	if r.Header.Get("X-Export-Truncated") != "true" || r.Header.Get("X-Total-Count") != strconv.Itoa(len(want)) {
		t.Errorf("X-Export-Truncated %q, X-Total-Count %q", r.Header.Get("X-Export-Truncated"), r.Header.Get("X-Total-Count"))
	}
}

func TestDailyCountsMatchReference(t *testing.T) {
	e := NewEnv(t, withBrowser())
	for _, p := range chatLogParams {
		t.Run(p.Query(), func(t *testing.T) {
			r := e.Get(t, AnalyticsPrefix+"/daily_counts?"+p.Query(), Bearer(e.Admin))
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			rng, err := analytics.ParseRange(p.Start, p.End)
			if err != nil {
				t.Fatal(err)
			}
			sel := analytics.Selection{Cat: p.Cat, Range: rng, Filters: p.Filters}
			want := []map[string]any{}
			for _, d := range chatlog.Daily(Normalized(), sel) {
				want = append(want, map[string]any{"date": d.Day.Format(analytics.DateLayout), "count": d.Count})
			}
			AssertJSON(t, r.Body, map[string]any{"daily_counts": want})
			var body struct {
				DailyCounts []struct{ Count int64 } `json:"daily_counts"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, d := range body.DailyCounts {
				sum += d.Count
			}
			if total := Reference(t, p).TotalInteractions; sum != total {
				t.Errorf("days sum to %d, total_interactions %d", sum, total)
			}
		})
	}
}
