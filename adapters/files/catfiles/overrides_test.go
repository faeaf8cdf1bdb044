package catfiles_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// TestOverrides covers Load's overrides as values (catsrv's configuration
// loader makes them of environment variables; its tests drive those
// through Load too).
func TestOverrides(t *testing.T) {
	dir := writeDir(t, map[string]string{"a.yaml": "cat: {chat_mode: agent}", "my-cat.yaml": "cat: {chat_mode: agent}"})
	d, err := catfiles.Load(dir, []catfiles.Override{
		{Source: "own", Cat: "MY_CAT", Key: "cat.chat_mode", Value: "legacy"},
		{Source: "all", Key: "cat.chat_mode", Value: "custom"},
		{Source: "list", Key: "cat.legacy.models", Value: []string{"qa"}},
		{Source: "generic", Cat: "MY_CAT", Key: "security.providers.corp.enabled", Value: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := d.Cats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []catconfig.Cat{
		cat("a", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeCustom; c.Chat.Legacy.Models = []string{"qa"} }),
		cat("my-cat", func(c *catconfig.Cat) {
			c.Chat.ChatMode = catconfig.ModeLegacy
			c.Chat.Legacy.Models = []string{"qa"}
			c.Security.Providers.Generic = map[string]catconfig.Provider{"corp": {Enabled: true}}
		}),
	}
	if !reflect.DeepEqual(cats, want) {
		t.Fatalf("Cats:\n got %+v\nwant %+v", cats, want)
	}

	refused := []struct {
		name  string
		files map[string]string
		o     catfiles.Override
		want  []string
	}{
		{"unknown key", map[string]string{"demo.yaml": ""}, catfiles.Override{Source: "X", Key: "cat.chatmode", Value: "agent"}, []string{"X", "unknown key cat.chatmode"}},
		{"value of another kind", map[string]string{"demo.yaml": ""}, catfiles.Override{Source: "X", Key: "security.jwt.expiration_hours", Value: "24"}, []string{"X", "want an integer"}},
		{"unknown CAT", map[string]string{"demo.yaml": ""}, catfiles.Override{Source: "X", Cat: "OTHER", Key: "cat.chat_mode", Value: "agent"}, []string{"X", "names no configured CAT"}},
		{"two CATs", map[string]string{"a-b.yaml": "", "a_b.yaml": ""}, catfiles.Override{Source: "X", Cat: "A_B", Key: "cat.chat_mode", Value: "agent"}, []string{"X", "ambiguous", "a-b and a_b"}},
		{"invalid value", map[string]string{"demo.yaml": ""}, catfiles.Override{Source: "X", Key: "cat.chat_mode", Value: "foo"}, []string{"demo.yaml", "cat.chat_mode", `"foo"`, "set by X"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catfiles.Load(writeDir(t, tt.files), []catfiles.Override{tt.o})
			if errs.KindOf(err) != errs.KindInvalid {
				t.Fatalf("error %v, want an invalid one", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
