// Package overlay is the runtime layer of CAT configuration: the subset of
// keys an admin may change while the server runs (POST
// /api/v1/cat/config/sync), how a change merges into what was changed
// before, and a CatDirectory that serves the file configuration with the
// changes applied. Changes are persisted through ports.CatOverrideStore and
// swapped in atomically, so a request sees either the old or the new
// configuration, never a mix. Instances sharing the store follow each
// other's changes (Directory.Follow): each CAT's changes carry the store's
// version and apply in version order on every instance.
package overlay

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// Bounds of the free-text keys, which the file configuration leaves to
// the operator but a request must not make unbounded.
const (
	MaxModelBytes        = 256
	MaxInstructionsBytes = 32 << 10
)

// Override is a change of the runtime keys; a nil field leaves the key as
// it is. The JSON names are those of the cat.* keys. The endpoint, the
// knowledge base, the default answer and the message limit stay with the
// files: they point at resources or bound storage. The JSON tags are the
// stored form (Encode, Parse), which ports.CatOverrideStore keeps; the
// HTTP body of POST /api/v1/cat/config/sync is a wire type of its own
// (apps/catsrv/internal/httpapi/chatapi) with the same names.
type Override struct {
	ChatMode *string         `json:"chat_mode,omitempty"`
	Agent    *AgentOverride  `json:"agent,omitempty"`
	Legacy   *LegacyOverride `json:"legacy,omitempty"`
	Custom   *CustomOverride `json:"custom,omitempty"`
}

// AgentOverride changes cat.agent.* keys.
type AgentOverride struct {
	Model          *string  `json:"model,omitempty"`
	Instructions   *string  `json:"instructions,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTokens      *int     `json:"max_tokens,omitempty"`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty"`
	// The loop's bounds and the tool policy may change at run time; the
	// MCP servers (commands, URLs) never: they come from the files only.
	MaxSteps               *int      `json:"max_steps,omitempty"`
	ToolTimeoutSeconds     *int      `json:"tool_timeout_seconds,omitempty"`
	ApprovalTimeoutSeconds *int      `json:"approval_timeout_seconds,omitempty"`
	Tools                  *[]string `json:"tools,omitempty"`
}

// LegacyOverride changes cat.legacy.* keys.
type LegacyOverride struct {
	Models   *[]string `json:"models,omitempty"`
	MinScore *float64  `json:"min_score,omitempty"`
}

// CustomOverride changes cat.custom.* keys.
type CustomOverride struct {
	Rules        *[]string `json:"rules,omitempty"`
	DefaultRoute *string   `json:"default_route,omitempty"`
}

// Parse reads a stored document strictly: an unknown key is
// errs.KindInvalid naming it, since silently dropping it would lose a
// change.
func Parse(doc []byte) (Override, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var o Override
	if err := dec.Decode(&o); err != nil {
		return Override{}, errs.Wrap(errs.KindInvalid, err, "runtime configuration document: "+problem(err))
	}
	return o, nil
}

// problem says what is wrong with a document without quoting it whole.
func problem(err error) string {
	msg := err.Error()
	if field, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + field
	}
	return "not a valid document"
}

// Encode is the stored form of an override.
func (o Override) Encode() ([]byte, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, errs.Wrap(errs.KindInternal, err, "cannot encode the runtime configuration")
	}
	return b, nil
}

// Merge returns o with every key next sets replaced.
func (o Override) Merge(next Override) Override {
	out := Override{ChatMode: pick(o.ChatMode, next.ChatMode)}
	if o.Agent != nil || next.Agent != nil {
		a, n := deref(o.Agent), deref(next.Agent)
		out.Agent = &AgentOverride{
			Model: pick(a.Model, n.Model), Instructions: pick(a.Instructions, n.Instructions),
			Temperature: pick(a.Temperature, n.Temperature), MaxTokens: pick(a.MaxTokens, n.MaxTokens),
			TimeoutSeconds: pick(a.TimeoutSeconds, n.TimeoutSeconds),
			MaxSteps:       pick(a.MaxSteps, n.MaxSteps), ToolTimeoutSeconds: pick(a.ToolTimeoutSeconds, n.ToolTimeoutSeconds),
			ApprovalTimeoutSeconds: pick(a.ApprovalTimeoutSeconds, n.ApprovalTimeoutSeconds), Tools: pick(a.Tools, n.Tools),
		}
	}
	if o.Legacy != nil || next.Legacy != nil {
		l, n := deref(o.Legacy), deref(next.Legacy)
		out.Legacy = &LegacyOverride{Models: pick(l.Models, n.Models), MinScore: pick(l.MinScore, n.MinScore)}
	}
	if o.Custom != nil || next.Custom != nil {
		c, n := deref(o.Custom), deref(next.Custom)
		out.Custom = &CustomOverride{Rules: pick(c.Rules, n.Rules), DefaultRoute: pick(c.DefaultRoute, n.DefaultRoute)}
	}
	return out
}

// Apply returns c with the override's keys set. Lists are copied: the
// result shares nothing with the override.
func (o Override) Apply(c catconfig.Cat) catconfig.Cat {
	set(&c.Chat.ChatMode, o.ChatMode)
	if a := o.Agent; a != nil {
		set(&c.Chat.Agent.Model, a.Model)
		set(&c.Chat.Agent.Instructions, a.Instructions)
		set(&c.Chat.Agent.Temperature, a.Temperature)
		set(&c.Chat.Agent.MaxTokens, a.MaxTokens)
		set(&c.Chat.Agent.TimeoutSeconds, a.TimeoutSeconds)
		set(&c.Chat.Agent.MaxSteps, a.MaxSteps)
		set(&c.Chat.Agent.ToolTimeoutSeconds, a.ToolTimeoutSeconds)
		set(&c.Chat.Agent.ApprovalTimeoutSeconds, a.ApprovalTimeoutSeconds)
		if a.Tools != nil {
			c.Chat.Agent.Tools = slices.Clone(*a.Tools)
		}
	}
	if l := o.Legacy; l != nil {
		if l.Models != nil {
			c.Chat.Legacy.Models = slices.Clone(*l.Models)
		}
		set(&c.Chat.Legacy.MinScore, l.MinScore)
	}
	if cu := o.Custom; cu != nil {
		if cu.Rules != nil {
			c.Chat.Custom.Rules = slices.Clone(*cu.Rules)
		}
		set(&c.Chat.Custom.DefaultRoute, cu.DefaultRoute)
	}
	return c
}

// Validate checks the keys the file configuration's rules do not bound;
// the rest is checked on the result of Apply (catconfig.Cat.Validate).
func (o Override) Validate() error {
	if o.Agent == nil {
		return nil
	}
	if m := o.Agent.Model; m != nil && (len(*m) > MaxModelBytes || !printable(*m)) {
		return errs.New(errs.KindInvalid, "cat.agent.model: must be at most %d bytes of printable text", MaxModelBytes)
	}
	if in := o.Agent.Instructions; in != nil && (len(*in) > MaxInstructionsBytes || !utf8.ValidString(*in) || strings.ContainsRune(*in, 0)) {
		return errs.New(errs.KindInvalid, "cat.agent.instructions: must be at most %d bytes of text", MaxInstructionsBytes)
	}
	return nil
}

func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func pick[T any](old, next *T) *T {
	if next != nil {
		return next
	}
	return old
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
