// Package prefs holds the rules of a user's memory (spec §2.5): the body of
// an update, how it merges into what is stored, and the size limits that
// keep one user from filling the database.
package prefs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Limits bound one user's memory. Sizes are bytes of compact JSON.
type Limits struct {
	MaxKeys       int
	MaxKeyBytes   int
	MaxValueBytes int
	MaxTotalBytes int
}

// DefaultLimits are the limits unless configured otherwise: 64 KiB in all.
var DefaultLimits = Limits{MaxKeys: 256, MaxKeyBytes: 256, MaxValueBytes: 16 << 10, MaxTotalBytes: 64 << 10}

// Patch is a parsed update: each key maps to its new compact JSON value, or
// to nil when the key is to be removed.
type Patch map[string]json.RawMessage

// ParseUpdate reads an update body {"preferences": {...}} of UTF-8 text.
// Anything else is errs.KindInvalid with a message naming the problem.
func ParseUpdate(body []byte) (Patch, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errs.New(errs.KindInvalid, "body is empty: send {\"preferences\": {...}}")
	}
	if !utf8.Valid(body) {
		// encoding/json would keep such bytes in a value as they are, and a
		// back end may refuse them: malformed input, not a store failure.
		return nil, errs.New(errs.KindInvalid, "body is not valid UTF-8")
	}
	if !json.Valid(body) {
		var probe any
		return nil, errs.New(errs.KindInvalid, "body is not valid JSON: %s", syntaxProblem(json.Unmarshal(body, &probe)))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, errs.New(errs.KindInvalid, "body must be a JSON object with a \"preferences\" object")
	}
	for k := range top {
		if k != "preferences" {
			return nil, errs.New(errs.KindInvalid, "unknown field %q: the body holds only \"preferences\"", truncate(k))
		}
	}
	raw, ok := top["preferences"]
	if !ok {
		return nil, errs.New(errs.KindInvalid, "field \"preferences\" is missing")
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nil, errs.New(errs.KindInvalid, "field \"preferences\" must be an object")
	}
	patch := make(Patch, len(entries))
	for k, v := range entries {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			patch[k] = nil
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return nil, errs.Wrap(errs.KindInternal, err, "cannot compact a valid JSON value")
		}
		patch[k] = compact.Bytes()
	}
	return patch, nil
}

// Merge applies a patch to the current memory at `at` and checks the
// result against the limits: a bad key is errs.KindInvalid, too many keys
// errs.KindInvalid, a value or a total too large errs.KindTooLarge.
func Merge(current auth.Memory, patch Patch, limits Limits, at time.Time) (auth.Memory, error) {
	next := maps.Clone(current.Preferences)
	if next == nil {
		next = map[string]json.RawMessage{}
	}
	for k, v := range patch {
		if err := checkKey(k, limits); err != nil {
			return auth.Memory{}, err
		}
		if v == nil {
			delete(next, k)
			continue
		}
		if len(v) > limits.MaxValueBytes {
			return auth.Memory{}, errs.New(errs.KindTooLarge, "preference %q is %d bytes: the limit is %d bytes per value", truncate(k), len(v), limits.MaxValueBytes)
		}
		next[k] = v
	}
	if len(next) > limits.MaxKeys {
		return auth.Memory{}, errs.New(errs.KindInvalid, "memory would hold %d preferences: the limit is %d keys", len(next), limits.MaxKeys)
	}
	if size := Size(next); size > limits.MaxTotalBytes {
		return auth.Memory{}, errs.New(errs.KindTooLarge, "memory would be %d bytes: the limit is %d bytes in all", size, limits.MaxTotalBytes)
	}
	return auth.Memory{Preferences: next, UpdatedAt: at.UTC()}, nil
}

// Size is the size of the preferences as one compact JSON object.
func Size(p map[string]json.RawMessage) int {
	if len(p) == 0 {
		return len("{}")
	}
	n := 1 // {
	for k, v := range p {
		key, _ := json.Marshal(k) // a string always marshals
		n += len(key) + 1 + len(v) + 1
	}
	return n
}

func checkKey(k string, limits Limits) error {
	switch {
	case k == "":
		return errs.New(errs.KindInvalid, "preference keys must not be empty")
	case !utf8.ValidString(k):
		return errs.New(errs.KindInvalid, "preference keys must be valid UTF-8")
	case len(k) > limits.MaxKeyBytes:
		return errs.New(errs.KindInvalid, "preference key %q is %d bytes: the limit is %d", truncate(k), len(k), limits.MaxKeyBytes)
	}
	return nil
}

// syntaxProblem describes a JSON syntax error with its position.
func syntaxProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error() + " (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	if err == nil {
		return "unexpected end"
	}
	return err.Error()
}

// truncate shortens a user-supplied key for an error message.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// Service reads and changes users' memories under the limits.
type Service struct {
	store  ports.MemoryStore
	limits Limits
	clock  ports.Clock
}

// New returns a Service; zero limits mean DefaultLimits.
func New(store ports.MemoryStore, limits Limits, clock ports.Clock) *Service {
	if limits == (Limits{}) {
		limits = DefaultLimits
	}
	return &Service{store: store, limits: limits, clock: clock}
}

// Limits returns the limits in force.
func (s *Service) Limits() Limits { return s.limits }

// Get returns the user's memory.
func (s *Service) Get(ctx context.Context, userID string) (auth.Memory, error) {
	return s.store.Memory(ctx, userID)
}

// Update merges an update body into the user's memory.
func (s *Service) Update(ctx context.Context, userID string, body []byte) (auth.Memory, error) {
	patch, err := ParseUpdate(body)
	if err != nil {
		return auth.Memory{}, err
	}
	return s.store.UpdateMemory(ctx, userID, func(cur auth.Memory) (auth.Memory, error) {
		return Merge(cur, patch, s.limits, s.clock.Now())
	})
}

// Clear removes the user's memory.
func (s *Service) Clear(ctx context.Context, userID string) error {
	return s.store.DeleteMemory(ctx, userID)
}
