package chatlog_test

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func TestCursorRoundTrip(t *testing.T) {
	for _, p := range []chatlog.Position{
		{Time: t0, Seq: 1},
		{Time: t0.Add(123456789 * time.Nanosecond), Seq: 9007199254740993},
		{Time: time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC), Seq: 0},
	} {
		t.Run(p.Time.String(), func(t *testing.T) {
			c := chatlog.EncodeCursor(p)
			got, err := chatlog.DecodeCursor(c)
			if err != nil || !got.Time.Equal(p.Time) || got.Seq != p.Seq {
				t.Errorf("DecodeCursor(EncodeCursor(%+v)) = %+v, %v", p, got, err)
			}
		})
	}
	if c := chatlog.EncodeCursor(chatlog.Position{}); c != "" {
		t.Errorf("start cursor %q, want empty", c)
	}
	if p, err := chatlog.DecodeCursor(""); err != nil || !p.IsZero() {
		t.Errorf("DecodeCursor(\"\") = %+v, %v", p, err)
	}
}

func TestDecodeCursorRejects(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, c := range map[string]string{
		"not base64":    "***",
		"no separator":  enc("2024-05-01T10:00:00Z"),
		"bad time":      enc("yesterday|3"),
		"bad seq":       enc("2024-05-01T10:00:00Z|x"),
		"negative seq":  enc("2024-05-01T10:00:00Z|-1"),
		"padded base64": base64.URLEncoding.EncodeToString([]byte("2024-05-01T10:00:00Z|1")),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := chatlog.DecodeCursor(c); errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("DecodeCursor(%q) error %v, want KindInvalid", c, err)
			}
		})
	}
}

func entry(at time.Time, seq int64, topic string) chatlog.Entry {
	return chatlog.Entry{Seq: seq, Interaction: analytics.Interaction{
		Time: at, Cat: "c", EventKind: analytics.EventKindAPI, Topic: topic, Model: "m", Persona: "p", Question: "q", Answer: "a",
	}.Normalize()}
}

func TestListOrderAndPaging(t *testing.T) {
	entries := []chatlog.Entry{
		entry(t0, 1, "a"),
		entry(t0.Add(time.Hour), 2, "b"),
		entry(t0, 3, "a"),
		entry(t0.Add(-time.Hour), 4, "b"),
		entry(t0, 5, "a"),
	}
	feedback := entry(t0.Add(2*time.Hour), 6, "a")
	feedback.EventKind = "feedback"
	entries = append(entries, feedback)
	sel := analytics.Selection{Cat: "c"}
	// Hand order: newest first, same time by descending seq.
	wantSeqs := []int64{2, 5, 3, 1, 4}
	var got []int64
	var after chatlog.Position
	for {
		l := chatlog.List(entries, sel, chatlog.Page{After: after, Limit: 2})
		for _, e := range l.Entries {
			got = append(got, e.Seq)
		}
		if l.Next.IsZero() {
			break
		}
		after = l.Next
	}
	if !slices.Equal(got, wantSeqs) {
		t.Errorf("paged seqs %v, want %v", got, wantSeqs)
	}
	onlyA := chatlog.List(entries, analytics.Selection{Cat: "c", Filters: analytics.Filters{Topics: []string{"a"}}}, chatlog.Page{Limit: 10})
	if len(onlyA.Entries) != 3 || !onlyA.Next.IsZero() {
		t.Errorf("topic a: %+v", onlyA)
	}
}

func TestDaily(t *testing.T) {
	day := func(d int, h time.Duration) analytics.Interaction {
		return entry(time.Date(2024, 5, d, 0, 0, 0, 0, time.UTC).Add(h), 0, "a").Interaction
	}
	in := []analytics.Interaction{day(3, time.Hour), day(1, 0), day(1, 24*time.Hour-time.Nanosecond), day(3, 0)}
	got := chatlog.Daily(in, analytics.Selection{Cat: "c"})
	want := []chatlog.DayCount{{Day: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), Count: 2}, {Day: time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC), Count: 2}}
	if !slices.Equal(got, want) {
		t.Errorf("Daily = %v, want %v", got, want)
	}
}

func TestPageCheck(t *testing.T) {
	for _, n := range []int{0, -3, chatlog.MaxPageSize + 1} {
		if err := (chatlog.Page{Limit: n}).Check(); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Check(%d) = %v", n, err)
		}
	}
	for _, n := range []int{1, chatlog.MaxPageSize} {
		if err := (chatlog.Page{Limit: n}).Check(); err != nil {
			t.Errorf("Check(%d) = %v", n, err)
		}
	}
}

func TestStorable(t *testing.T) {
	cases := []struct {
		name string
		in   analytics.Selection
		ok   bool
		want analytics.Filters
	}{
		{"clean", analytics.Selection{Cat: "c", Filters: analytics.Filters{Topics: []string{"a"}}}, true, analytics.Filters{Topics: []string{"a"}}},
		{"bad cat", analytics.Selection{Cat: "c\x00"}, false, analytics.Filters{}},
		{"some bad values", analytics.Selection{Cat: "c", Filters: analytics.Filters{Models: []string{"\xff", "m"}}}, true, analytics.Filters{Models: []string{"m"}}},
		{"all bad values", analytics.Selection{Cat: "c", Filters: analytics.Filters{Personas: []string{"\x00"}}}, false, analytics.Filters{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := chatlog.Storable(c.in)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if ok && !slices.Equal(got.Filters.Topics, c.want.Topics) || ok && !slices.Equal(got.Filters.Models, c.want.Models) {
				t.Errorf("filters %+v, want %+v", got.Filters, c.want)
			}
		})
	}
}
