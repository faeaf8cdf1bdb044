package importer_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/importer"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var testCats = []string{"demo", "other"}

func directory() *memstore.Cats {
	return memstore.NewCats(catconfig.Defaults("demo"), catconfig.Defaults("other"))
}

// interactions returns n varied valid interactions over testCats, a few of
// them not api events and a few with explicit ids.
func interactions(n int) []analytics.Interaction {
	start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	out := make([]analytics.Interaction, n)
	for k := range out {
		i := analytics.Interaction{
			Time: start.Add(time.Duration(k) * 7 * time.Minute), Cat: testCats[k%2], EventKind: "api",
			Question: fmt.Sprintf("question %d", k%13), Answer: fmt.Sprintf("answer %d", k%7),
			Topic: []string{"billing", "account", "shipping"}[k%3], Model: []string{"gpt-4o", "llama-3-70b"}[k%2],
			Persona: []string{"customer", "agent", "admin", "developer"}[k%4], UserID: fmt.Sprintf("u-%d", k%17),
		}
		if k%10 == 9 {
			i.EventKind = "feedback"
		}
		if k%13 == 0 {
			i.QuestionID = "faq-0"
		}
		out[k] = i
	}
	return out
}

func lines(is []analytics.Interaction) []string {
	out := make([]string, len(is))
	for k, i := range is {
		out[k] = strings.TrimSuffix(string(jsonl.AppendLine(nil, i)), "\n")
	}
	return out
}

func join(ls []string) string { return strings.Join(ls, "\n") + "\n" }

// assertStored compares the store with the core reference over want.
func assertStored(t *testing.T, store ports.Aggregator, want []analytics.Interaction) {
	t.Helper()
	ctx := context.Background()
	normalized := make([]analytics.Interaction, len(want))
	for k, i := range want {
		normalized[k] = i.Normalize()
	}
	byKey := func(a, b analytics.Group) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Text, b.Text)) }
	for _, cat := range testCats {
		sel := analytics.Selection{Cat: cat}
		answer, err := store.Answer(ctx, analytics.Query{Cat: cat}, analytics.AllParts)
		if err != nil {
			t.Fatal(err)
		}
		if ref := analytics.CountTotal(normalized, sel); answer.Total != ref {
			t.Errorf("CAT %s: total %d, reference %d", cat, answer.Total, ref)
		}
		for _, d := range analytics.Dimensions {
			got := answer.Groups[d]
			ref := analytics.CountGroups(normalized, sel, d)
			slices.SortFunc(got, byKey)
			slices.SortFunc(ref, byKey)
			if len(got)+len(ref) > 0 && !reflect.DeepEqual(got, ref) {
				t.Errorf("CAT %s, %s: groups %v, reference %v", cat, d, got, ref)
			}
		}
	}
}

func run(t *testing.T, input io.Reader, skip bool) (*memstore.Store, importer.Report, error) {
	t.Helper()
	store := memstore.New()
	rep, err := importer.Run(context.Background(), importer.Options{Log: store, Cats: directory(), Input: input, SkipInvalid: skip})
	return store, rep, err
}

func TestImport(t *testing.T) {
	valid := interactions(400)
	good := lines(valid)
	replace := func(at map[int]string) string { // 1-based line numbers
		ls := slices.Clone(good)
		for no, l := range at {
			ls[no-1] = l
		}
		return join(ls)
	}
	without := func(nos ...int) []analytics.Interaction {
		var out []analytics.Interaction
		for k, i := range valid {
			if !slices.Contains(nos, k+1) {
				out = append(out, i)
			}
		}
		return out
	}
	edited := func(k int, edit func(*analytics.Interaction)) string {
		i := valid[k]
		edit(&i)
		return lines([]analytics.Interaction{i})[0]
	}
	unknownCat := edited(9, func(i *analytics.Interaction) { i.Cat = "nope" })
	huge := `{"question":"` + strings.Repeat("x", 2<<20) + `"}`

	tests := []struct {
		name      string
		input     string
		skip      bool
		stored    []analytics.Interaction // nil: nothing
		imported  int
		invalid   []int // line numbers
		errParts  []string
		lineParts []string // substrings of the line errors, in order
	}{
		{name: "all valid", input: join(good), stored: valid, imported: 400},
		{name: "empty input", input: "", imported: 0},
		{name: "one bad line among many", input: replace(map[int]string{250: `{"time":`}),
			invalid: []int{250}, errParts: []string{"1 invalid line,", "nothing imported", "line 250: bad JSON"}},
		{name: "bad lines named in order with reasons", input: replace(map[int]string{
			3: `{"time":"yesterday"}`, 10: unknownCat, 399: edited(398, func(i *analytics.Interaction) { i.Persona = "" })}),
			invalid:  []int{3, 10, 399},
			errParts: []string{"3 invalid lines", "line 3: field time", `line 10: unknown CAT "nope"`, "line 399: missing field: persona"}},
		{name: "skip-invalid imports the rest", skip: true,
			input:  replace(map[int]string{3: `{"time":"yesterday"}`, 10: unknownCat, 200: "not json"}),
			stored: without(3, 10, 200), imported: 397, invalid: []int{3, 10, 200},
			lineParts: []string{"field time", "unknown CAT", "bad JSON"}},
		{name: "unknown CAT", input: replace(map[int]string{10: unknownCat}), invalid: []int{10},
			errParts: []string{`line 10: unknown CAT "nope": not in the configuration`}},
		{name: "blank lines are skipped and counted", input: "\n\n" + join(good[:5]) + "\n  \n" + join(good[5:]),
			stored: valid, imported: 400},
		{name: "blank lines count in error line numbers", input: "\n\n" + good[0] + "\n\nbad\n", invalid: []int{5},
			errParts: []string{"line 5: bad JSON"}},
		{name: "CRLF line ends", input: strings.ReplaceAll(join(good), "\n", "\r\n"), stored: valid, imported: 400},
		{name: "a 2 MiB line", input: replace(map[int]string{7: huge}), invalid: []int{7},
			errParts: []string{"line 7: line is longer than 1048576 bytes"}},
		{name: "a 2 MiB line skipped", skip: true, input: replace(map[int]string{7: huge}),
			stored: without(7), imported: 399, invalid: []int{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, rep, err := run(t, strings.NewReader(tt.input), tt.skip)
			assertStored(t, store, tt.stored)
			if rep.Imported != tt.imported {
				t.Errorf("Imported = %d, want %d", rep.Imported, tt.imported)
			}
			var nos []int
			for k, e := range rep.Invalid {
				nos = append(nos, e.Line)
				if k < len(tt.lineParts) && !strings.Contains(e.Error(), tt.lineParts[k]) {
					t.Errorf("invalid line %v does not mention %q", e, tt.lineParts[k])
				}
			}
			if !slices.Equal(nos, tt.invalid) || rep.InvalidCount != len(tt.invalid) {
				t.Errorf("invalid lines %v (count %d), want %v", nos, rep.InvalidCount, tt.invalid)
			}
			if tt.skip && rep.Skipped != len(tt.invalid) {
				t.Errorf("Skipped = %d, want %d", rep.Skipped, len(tt.invalid))
			}
			if tt.errParts == nil {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
			if errs.KindOf(err) != errs.KindInvalid {
				t.Fatalf("error %v has kind %v, want invalid", err, errs.KindOf(err))
			}
			for _, p := range tt.errParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not mention %q", err, p)
				}
			}
		})
	}
}

func TestImportNamesTwentyBadLines(t *testing.T) {
	ls := lines(interactions(300))
	for k := 0; k < 150; k++ {
		ls[2*k] = fmt.Sprintf(`{"bad line %d"`, k)
	}
	store, rep, err := run(t, strings.NewReader(join(ls)), false)
	assertStored(t, store, nil)
	if rep.InvalidCount != 150 || len(rep.Invalid) != importer.MaxKeptErrors {
		t.Errorf("InvalidCount %d, kept %d; want 150 and %d", rep.InvalidCount, len(rep.Invalid), importer.MaxKeptErrors)
	}
	msg := err.Error()
	for k := range 20 {
		if !strings.Contains(msg, fmt.Sprintf("line %d: bad JSON", 2*k+1)) {
			t.Errorf("error does not name line %d", 2*k+1)
		}
	}
	if strings.Contains(msg, "line 41:") || !strings.Contains(msg, "and 130 more") {
		t.Errorf("error should name 20 lines then say 'and 130 more': %s", msg)
	}
}

// TestImportTwiceWithInteractionIDs: a file whose lines carry
// interaction_id imports once; imported again, it stores only the lines
// without one.
func TestImportTwiceWithInteractionIDs(t *testing.T) {
	is := interactions(40)
	for k := range is {
		if k%4 != 0 {
			is[k].InteractionID = fmt.Sprintf("ext-%d", k)
		}
	}
	input := join(lines(is))
	log := memstore.New()
	for run, want := range []int{40, 10} {
		rep, err := importer.Run(t.Context(), importer.Options{Log: log, Cats: directory(), Input: strings.NewReader(input)})
		if err != nil || rep.Imported != want {
			t.Fatalf("import %d: imported %d, %v; want %d", run+1, rep.Imported, err, want)
		}
	}
	// The reference: every line once, and the lines without an id twice.
	ref := append(slices.Clone(is), is[0], is[4], is[8], is[12], is[16], is[20], is[24], is[28], is[32], is[36])
	want := memstore.New()
	if _, err := want.Append(t.Context(), analytics.Each(ref)); err != nil {
		t.Fatal(err)
	}
	for _, cat := range testCats {
		q := analytics.Query{Cat: cat}
		got, err := log.Answer(t.Context(), q, analytics.PartTotal)
		if err != nil {
			t.Fatal(err)
		}
		exp, _ := want.Answer(t.Context(), q, analytics.PartTotal)
		if got.Total == 0 || got.Total != exp.Total {
			t.Errorf("%s: %+v, want %+v", cat, got.Total, exp.Total)
		}
	}
}
