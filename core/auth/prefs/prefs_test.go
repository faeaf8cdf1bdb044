package prefs_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

var at = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func TestParseUpdate(t *testing.T) {
	cases := []struct {
		name string
		body string
		want map[string]string // "<nil>" marks a removal
		err  string
	}{
		{"values compacted", `{"preferences": {"a": [1, 2], "b": {"x" : "y"}}}`, map[string]string{"a": "[1,2]", "b": `{"x":"y"}`}, ""},
		{"null removes", `{"preferences":{"a":null}}`, map[string]string{"a": "<nil>"}, ""},
		{"empty object", `{"preferences":{}}`, map[string]string{}, ""},
		{"empty body", ``, nil, "body is empty"},
		{"syntax error names the offset", `{"preferences":{"a":1,}}`, nil, "at byte"},
		{"truncated", `{"preferences":{"a":1}`, nil, "not valid JSON"},
		{"array", `[]`, nil, `with a "preferences" object`},
		{"missing preferences", `{"prefs":{}}`, nil, `unknown field "prefs"`},
		{"no fields", `{}`, nil, `"preferences" is missing`},
		{"preferences null", `{"preferences":null}`, nil, `must be an object`},
		{"preferences a list", `{"preferences":[1]}`, nil, `must be an object`},
		{"a value not UTF-8", "{\"preferences\":{\"persona\":\"p\xffx\"}}", nil, "not valid UTF-8"},
		{"a key not UTF-8", "{\"preferences\":{\"p\xc3\":1}}", nil, "not valid UTF-8"},
		{"escaped NUL kept escaped", `{"preferences":{"a\u0000":"b\u0000"}}`, map[string]string{"a\x00": `"b\u0000"`}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := prefs.ParseUpdate([]byte(c.body))
			if c.err != "" {
				if errs.KindOf(err) != errs.KindInvalid || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want invalid with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range p {
				if v == nil {
					got[k] = "<nil>"
				} else {
					got[k] = string(v)
				}
			}
			if !maps.Equal(got, c.want) {
				t.Fatalf("patch %v, want %v", got, c.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	limits := prefs.Limits{MaxKeys: 3, MaxKeyBytes: 8, MaxValueBytes: 10, MaxTotalBytes: 36}
	current := auth.Memory{Preferences: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`"x"`)}}
	cases := []struct {
		name  string
		patch prefs.Patch
		want  map[string]string
		kind  errs.Kind
		msg   string
	}{
		{"add and replace", prefs.Patch{"a": json.RawMessage(`2`), "c": json.RawMessage(`true`)}, map[string]string{"a": "2", "b": `"x"`, "c": "true"}, 0, ""},
		{"remove", prefs.Patch{"a": nil, "zz": nil}, map[string]string{"b": `"x"`}, 0, ""},
		{"value at the limit", prefs.Patch{"c": json.RawMessage(`"12345678"`)}, map[string]string{"a": "1", "b": `"x"`, "c": `"12345678"`}, 0, ""},
		{"value over the limit", prefs.Patch{"c": json.RawMessage(`"123456789"`)}, nil, errs.KindTooLarge, "per value"},
		{"too many keys", prefs.Patch{"c": json.RawMessage(`1`), "d": json.RawMessage(`1`)}, nil, errs.KindInvalid, "limit is 3 keys"},
		{"too many keys unless one is removed", prefs.Patch{"c": json.RawMessage(`1`), "d": json.RawMessage(`1`), "a": nil}, map[string]string{"b": `"x"`, "c": "1", "d": "1"}, 0, ""},
		{"total over the limit", prefs.Patch{"c": json.RawMessage(`"12345678"`), "a": json.RawMessage(`"12345678"`)}, nil, errs.KindTooLarge, "in all"},
		{"empty key", prefs.Patch{"": json.RawMessage(`1`)}, nil, errs.KindInvalid, "empty"},
		{"long key", prefs.Patch{"123456789": json.RawMessage(`1`)}, nil, errs.KindInvalid, "the limit is 8"},
		{"invalid UTF-8 key", prefs.Patch{"\xff": json.RawMessage(`1`)}, nil, errs.KindInvalid, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := prefs.Merge(current, c.patch, limits, at)
			if c.msg != "" {
				if errs.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("error %v, want %v with %q", err, c.kind, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for k, v := range got.Preferences {
				m[k] = string(v)
			}
			if !maps.Equal(m, c.want) || !got.UpdatedAt.Equal(at) {
				t.Fatalf("merged %v at %v, want %v at %v", m, got.UpdatedAt, c.want, at)
			}
			if len(current.Preferences) != 2 || string(current.Preferences["a"]) != "1" {
				t.Fatal("Merge changed the current memory")
			}
		})
	}
}

func TestSizeIsCompactJSON(t *testing.T) {
	p := map[string]json.RawMessage{"a": json.RawMessage(`1`), "é\"": json.RawMessage(`[true,null]`)}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := prefs.Size(p); got != len(b) {
		t.Fatalf("Size = %d, want %d (len of %s)", got, len(b), b)
	}
	if got := prefs.Size(nil); got != 2 {
		t.Fatalf("Size(nil) = %d, want 2", got)
	}
}

type fixedClock struct{}

func (fixedClock) Now() time.Time { return at }

func TestServiceRefusesBeforeStoring(t *testing.T) {
	store := &mocks.MemoryStoreMock{
		UpdateMemoryFunc: func(_ context.Context, _ string, change func(auth.Memory) (auth.Memory, error)) (auth.Memory, error) {
			return change(auth.Memory{Preferences: map[string]json.RawMessage{}})
		},
	}
	svc := prefs.New(store, prefs.Limits{}, fixedClock{})
	if svc.Limits() != prefs.DefaultLimits || prefs.DefaultLimits.MaxTotalBytes != 64<<10 {
		t.Fatalf("limits %+v, want the 64 KiB defaults", svc.Limits())
	}
	if _, err := svc.Update(t.Context(), "u1", []byte(`nope`)); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("error %v, want invalid", err)
	}
	if n := len(store.UpdateMemoryCalls()); n != 0 {
		t.Fatalf("a malformed body reached the store (%d calls)", n)
	}
	m, err := svc.Update(t.Context(), "u1", []byte(`{"preferences":{"k":"v"}}`))
	if err != nil || string(m.Preferences["k"]) != `"v"` || !m.UpdatedAt.Equal(at) {
		t.Fatalf("Update = %+v, %v", m, err)
	}
	if calls := store.UpdateMemoryCalls(); len(calls) != 1 || calls[0].UserID != "u1" {
		t.Fatalf("store calls %+v", calls)
	}
}
