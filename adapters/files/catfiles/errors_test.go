package catfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/core/errs"
)

func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // every one must appear in the error
	}{
		{name: "unknown key", files: map[string]string{"demo.yaml": "cat: {chat_mod: agent}"},
			want: []string{"demo.yaml", "unknown key cat.chat_mod"}},
		{name: "generic provider with another key", files: map[string]string{"demo.yaml": "security: {providers: {corp: {enable: true}}}"},
			want: []string{"demo.yaml", "unknown key security.providers.corp.enable"}},
		{name: "generic provider with a bad name", files: map[string]string{"demo.yaml": "security: {providers: {Corp: {enabled: true}}}"},
			want: []string{"demo.yaml", "unknown key security.providers.Corp.enabled"}},
		{name: "generic provider not a boolean", files: map[string]string{"demo.yaml": "security: {providers: {corp: {enabled: \"yes\"}}}"},
			want: []string{"demo.yaml", "security.providers.corp.enabled", "boolean"}},
		{name: "unknown top-level key", files: map[string]string{"demo.yaml": "name: demo"},
			want: []string{"demo.yaml", "unknown key name"}},
		{name: "secret-looking key", files: map[string]string{"demo.yaml": "security: {providers: {provider_b: {client_secret: x}}}"},
			want: []string{"demo.yaml", "security.providers.provider_b.client_secret", "secrets come from the environment only"}},
		{name: "api key", files: map[string]string{"demo.yaml": "cat: {agent: {api_key: x}}"},
			want: []string{"demo.yaml", "cat.agent.api_key", "secrets come from the environment only"}},
		{name: "password", files: map[string]string{"demo.yaml": "Password: x"},
			want: []string{"demo.yaml", "Password", "secrets come from the environment only"}},
		{name: "jwt token", files: map[string]string{"demo.yaml": "security: {jwt: {token: x}}"},
			want: []string{"demo.yaml", "security.jwt.token", "secrets come from the environment only"}},
		{name: "chat_mode foo", files: map[string]string{"demo.yaml": "cat: {chat_mode: foo}"},
			want: []string{"demo.yaml", "cat.chat_mode", `"foo"`}},
		{name: "algorithm RS256", files: map[string]string{"demo.yaml": "security: {jwt: {algorithm: RS256}}"},
			want: []string{"demo.yaml", "security.jwt.algorithm", "RS256"}},
		{name: "expiration_hours 0", files: map[string]string{"demo.yaml": "security: {jwt: {expiration_hours: 0}}"},
			want: []string{"demo.yaml", "security.jwt.expiration_hours", "0"}},
		{name: "bad legacy stage", files: map[string]string{"demo.yaml": "cat: {legacy: {models: [qa, smalltalk]}}"},
			want: []string{"demo.yaml", "cat.legacy.models", "smalltalk"}},
		{name: "quoted boolean", files: map[string]string{"demo.yaml": `security: {analytics: {public: "yes"}}`},
			want: []string{"demo.yaml", "security.analytics.public", "want a boolean"}},
		{name: "quoted integer", files: map[string]string{"demo.yaml": `security: {jwt: {expiration_hours: "24"}}`},
			want: []string{"demo.yaml", "security.jwt.expiration_hours", "want an integer"}},
		{name: "fractional integer", files: map[string]string{"demo.yaml": `security: {jwt: {expiration_hours: 1.5}}`},
			want: []string{"demo.yaml", "security.jwt.expiration_hours", "want an integer"}},
		{name: "scalar for a list", files: map[string]string{"demo.yaml": "cat: {legacy: {models: qa}}"},
			want: []string{"demo.yaml", "cat.legacy.models", "want a list of strings"}},
		{name: "number in a list", files: map[string]string{"demo.yaml": "cat: {legacy: {models: [qa, 3]}}"},
			want: []string{"demo.yaml", "cat.legacy.models", "want a list of strings"}},
		{name: "scalar for a section", files: map[string]string{"demo.yaml": "cat: agent"},
			want: []string{"demo.yaml", "key cat is a section"}},
		{name: "not YAML", files: map[string]string{"demo.yaml": "cat: [unclosed"},
			want: []string{"demo.yaml", "not a valid YAML mapping"}},
		{name: "a list at the top", files: map[string]string{"demo.yaml": "- a\n- b\n"},
			want: []string{"demo.yaml", "not a valid YAML mapping"}},
		{name: "upper-case file name", files: map[string]string{"Demo.yaml": ""},
			want: []string{"Demo.yaml", "file name must be <catname>.yaml"}},
		{name: "file name with a space", files: map[string]string{"my cat.yaml": ""},
			want: []string{"my cat.yaml", "file name must be <catname>.yaml"}},
		{name: "same CAT twice", files: map[string]string{"demo.yaml": "", "demo.yml": ""},
			want: []string{"demo.yaml", "demo.yml", "configured twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catfiles.Load(writeDir(t, tt.files), nil)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("kind = %v, want invalid (%v)", errs.KindOf(err), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := catfiles.Load(dir, nil)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Load(missing) = %v, want an error naming %s", err, dir)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := catfiles.Load(file, nil); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("Load(a file) = %v, want an error naming %s", err, file)
	}
}

func TestLookup(t *testing.T) {
	dir := writeDir(t, map[string]string{"zeta.yaml": "", "alpha.yaml": "", "mid-1.yml": ""})
	d, err := catfiles.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cats, err := d.Cats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cats {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "alpha,mid-1,zeta"; got != want {
		t.Errorf("Cats() names = %s, want %s", got, want)
	}

	for _, name := range []string{"", "nope", "ALPHA", "alpha\x00", "../x", "../x.yaml", "x", "alpha.yaml", "./alpha", strings.Repeat("a", 10000)} {
		t.Run("unknown "+strings.ToValidUTF8(name[:min(len(name), 20)], "?"), func(t *testing.T) {
			_, err := d.Cat(ctx, name)
			if errs.KindOf(err) != errs.KindNotFound {
				t.Fatalf("Cat(%q) error = %v, want not found", name, err)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error repeats %d bytes of the name", len(err.Error()))
			}
		})
	}

	t.Run("results are copies", func(t *testing.T) {
		c, err := d.Cat(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		c.Chat.Legacy.Models[0] = "changed"
		again, err := d.Cat(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		if again.Chat.Legacy.Models[0] == "changed" {
			t.Error("changing a returned configuration changed the directory")
		}
	})
}

func TestDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	keys := catfiles.Keys()
	if len(keys) != 37 {
		t.Errorf("Keys() = %v, want the 10 keys of spec §2.6, security.analytics.public, security.cors.allowed_origins the 18 chat keys of docs/chat.md (feedback and budgets included), the two retention keys and the six cat.knowledge keys of docs/knowledge.md", keys)
	}
	for _, k := range keys {
		if !strings.Contains(string(doc), "//\t"+k+" ") {
			t.Errorf("doc.go does not list key %s", k)
		}
	}
}
