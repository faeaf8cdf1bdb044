package overlay_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/errs"
)

func ptr[T any](v T) *T { return &v }

func files() *memstore.Cats {
	return memstore.NewCats(catconfig.Defaults("shop"), catconfig.Defaults("other"))
}

func TestSyncAppliesPersistsAndSurvivesARebuild(t *testing.T) {
	ctx := context.Background()
	store := memstore.NewCatOverrides()
	d, err := overlay.Load(ctx, files(), store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeAgent), Agent: &overlay.AgentOverride{Model: ptr("m1"), Temperature: ptr(0.2)}}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Sync(ctx, "shop", overlay.Override{Agent: &overlay.AgentOverride{MaxTokens: ptr(77)}, Legacy: &overlay.LegacyOverride{Models: &[]string{"qa"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := catconfig.Defaults("shop")
	want.Chat.ChatMode = catconfig.ModeAgent
	want.Chat.Agent.Model, want.Chat.Agent.Temperature, want.Chat.Agent.MaxTokens = "m1", 0.2, 77
	want.Chat.Legacy.Models = []string{"qa"}

	rebuilt, err := overlay.Load(ctx, files(), store)
	if err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]*overlay.Directory{"same": d, "rebuilt": rebuilt} {
		t.Run(name, func(t *testing.T) {
			c, err := dir.Cat(ctx, "shop")
			if err != nil {
				t.Fatal(err)
			}
			if !equal(c, want) || !equal(got, want) {
				t.Errorf("effective config\n%+v\nwant\n%+v", c.Chat, want.Chat)
			}
			other, err := dir.Cat(ctx, "other")
			if err != nil || !equal(other, catconfig.Defaults("other")) {
				t.Errorf("other CAT changed: %+v %v", other.Chat, err)
			}
			all, err := dir.Cats(ctx)
			if err != nil || len(all) != 2 || !equal(all[1], want) {
				t.Errorf("Cats = %+v, %v", all, err)
			}
		})
	}
}

func TestSyncRefusesNamingTheKey(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		change overlay.Override
		field  string
	}{
		{"mode", overlay.Override{ChatMode: ptr("magic")}, "cat.chat_mode"},
		{"temperature", overlay.Override{Agent: &overlay.AgentOverride{Temperature: ptr(3.0)}}, "cat.agent.temperature"},
		{"max tokens", overlay.Override{Agent: &overlay.AgentOverride{MaxTokens: ptr(0)}}, "cat.agent.max_tokens"},
		{"timeout", overlay.Override{Agent: &overlay.AgentOverride{TimeoutSeconds: ptr(601)}}, "cat.agent.timeout_seconds"},
		{"model", overlay.Override{Agent: &overlay.AgentOverride{Model: ptr("a\nb")}}, "cat.agent.model"},
		{"instructions", overlay.Override{Agent: &overlay.AgentOverride{Instructions: ptr(strings.Repeat("x", overlay.MaxInstructionsBytes+1))}}, "cat.agent.instructions"},
		{"stage", overlay.Override{Legacy: &overlay.LegacyOverride{Models: &[]string{"oracle"}}}, "cat.legacy.models"},
		{"min score", overlay.Override{Legacy: &overlay.LegacyOverride{MinScore: ptr(-0.1)}}, "cat.legacy.min_score"},
		{"rule", overlay.Override{Custom: &overlay.CustomOverride{Rules: &[]string{"nonsense"}}}, "cat.custom.rules[0]"},
		{"route", overlay.Override{Custom: &overlay.CustomOverride{DefaultRoute: ptr("nowhere")}}, "cat.custom.default_route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.NewCatOverrides()
			d, err := overlay.Load(ctx, files(), store)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sync(ctx, "shop", tt.change)
			if errs.KindOf(err) != errs.KindInvalid || !strings.HasPrefix(errs.PublicMessage(err, ""), tt.field) {
				t.Fatalf("err = %v, want invalid naming %s", err, tt.field)
			}
			if c, _ := d.Cat(ctx, "shop"); !equal(c, catconfig.Defaults("shop")) {
				t.Errorf("a refused change was applied: %+v", c.Chat)
			}
			if docs, _ := store.CatOverridesSince(ctx, 0); len(docs) != 0 {
				t.Errorf("a refused change was stored: %v", docs)
			}
		})
	}
	d, err := overlay.Load(ctx, files(), memstore.NewCatOverrides())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sync(ctx, "nope", overlay.Override{}); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("unknown CAT: err = %v, want not found", err)
	}
}

func TestLoadRefusesBadStoredDocuments(t *testing.T) {
	ctx := context.Background()
	tests := []struct{ name, doc, want string }{
		{"unknown key", `{"agent":{"base_url":"http://x"}}`, `unknown key "base_url"`},
		{"not JSON", `{`, "not a valid document"},
		{"invalid value", `{"chat_mode":"magic"}`, "cat.chat_mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.NewCatOverrides()
			if _, err := store.SaveCatOverride(ctx, "shop", 0, []byte(tt.doc)); err != nil {
				t.Fatal(err)
			}
			_, err := overlay.Load(ctx, files(), store)
			if errs.KindOf(err) != errs.KindInvalid || !strings.Contains(errs.PublicMessage(err, ""), tt.want) || !strings.Contains(errs.PublicMessage(err, ""), "shop") {
				t.Errorf("err = %v, want invalid naming shop and %s", err, tt.want)
			}
		})
	}
}

func TestAppliedListsShareNothing(t *testing.T) {
	rules := []string{"keyword refund => agent"}
	o := overlay.Override{Custom: &overlay.CustomOverride{Rules: &rules}}
	c := o.Apply(catconfig.Defaults("shop"))
	rules[0] = "changed"
	if c.Chat.Custom.Rules[0] != "keyword refund => agent" {
		t.Errorf("applied rules alias the override: %q", c.Chat.Custom.Rules)
	}
}

func equal(a, b catconfig.Cat) bool {
	return a.Name == b.Name && a.Chat.ChatMode == b.Chat.ChatMode && reflect.DeepEqual(a.Chat.Agent, b.Chat.Agent) &&
		strings.Join(a.Chat.Legacy.Models, ",") == strings.Join(b.Chat.Legacy.Models, ",") &&
		a.Chat.Legacy.MinScore == b.Chat.Legacy.MinScore &&
		strings.Join(a.Chat.Custom.Rules, "\n") == strings.Join(b.Chat.Custom.Rules, "\n") &&
		a.Chat.Custom.DefaultRoute == b.Chat.Custom.DefaultRoute && a.Chat.MaxMessageBytes == b.Chat.MaxMessageBytes
}

// TestReadersSeeWholeChanges syncs two keys together while others read:
// every read sees both keys of one change, never one of each.
func TestReadersSeeWholeChanges(t *testing.T) {
	ctx := context.Background()
	d, err := overlay.Load(ctx, files(), memstore.NewCatOverrides())
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string]string{catconfig.ModeAgent: "model-a", catconfig.ModeLegacy: "model-l"}
	done := make(chan struct{})
	failures := make(chan string, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				c, err := d.Cat(ctx, "shop")
				if err != nil {
					t.Error(err)
					return
				}
				if want, ok := pairs[c.Chat.ChatMode]; ok && c.Chat.Agent.Model != "" && c.Chat.Agent.Model != want {
					select {
					case failures <- c.Chat.ChatMode + " with " + c.Chat.Agent.Model:
					default:
					}
				}
			}
		})
	}
	for i := range 200 {
		mode := catconfig.ModeAgent
		if i%2 == 1 {
			mode = catconfig.ModeLegacy
		}
		if _, err := d.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(mode), Agent: &overlay.AgentOverride{Model: ptr(pairs[mode])}}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	select {
	case f := <-failures:
		t.Errorf("a reader saw half a change: %s", f)
	default:
	}
}
