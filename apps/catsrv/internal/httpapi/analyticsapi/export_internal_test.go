package analyticsapi

import (
	"bytes"
	"encoding/csv"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

func TestSpreadsheetSafe(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"a=1", "a=1"},
		{" =1", " =1"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := spreadsheetSafe(c.in); got != c.want {
				t.Errorf("spreadsheetSafe(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestWriteCSVNeutralizesFormulas(t *testing.T) {
	hostile := chatlog.Entry{Interaction: analytics.Interaction{
		Time: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Question: "=cmd|' /C calc'!A0", Answer: "+SUM(1,2)",
		Topic: "-topic", Model: "@model", Persona: "plain, with \"quotes\"\nand a line", QuestionID: "q-1", AnswerID: "a-1",
	}}
	var buf bytes.Buffer
	if err := writeCSV(&buf, func(yield func(chatlog.Entry, error) bool) { yield(hostile, nil) }); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2024-01-02T03:04:05Z", "'=cmd|' /C calc'!A0", "'+SUM(1,2)", "'-topic", "'@model", "plain, with \"quotes\"\nand a line", "q-1", "a-1", "", ""}
	if len(records) != 2 || !slices.Equal(records[1], want) {
		t.Errorf("records %q, want header and %q", records, want)
	}
}

func TestWriteCSVStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	err := writeCSV(&bytes.Buffer{}, func(yield func(chatlog.Entry, error) bool) { yield(chatlog.Entry{}, boom) })
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}
