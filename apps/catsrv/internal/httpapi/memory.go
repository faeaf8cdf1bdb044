package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// MemoryResponse is the body of every /memory answer (spec §2.5): the
// caller's preferences and when they last changed (null when never).
type MemoryResponse struct {
	Preferences map[string]json.RawMessage `json:"preferences"`
	UpdatedAt   *time.Time                 `json:"updated_at"`
}

func memoryBody(m auth.Memory) MemoryResponse {
	out := MemoryResponse{Preferences: m.Preferences}
	if out.Preferences == nil {
		out.Preferences = map[string]json.RawMessage{}
	}
	if !m.UpdatedAt.IsZero() {
		t := m.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}

func (a *authAPI) failMemory(w http.ResponseWriter, r *http.Request, err error) {
	a.failWith(w, r, err, memoryKindResponses)
}

// getMemory returns the caller's memory.
func (a *authAPI) getMemory(w http.ResponseWriter, r *http.Request) {
	c, err := a.authenticate(r)
	if err != nil {
		a.failMemory(w, r, err)
		return
	}
	m, err := a.d.Memory.Get(r.Context(), c.Subject)
	if err != nil {
		a.failMemory(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoryBody(m))
}

// postMemory merges {"preferences": {...}} into the caller's memory; a key
// set to null is removed.
func (a *authAPI) postMemory(w http.ResponseWriter, r *http.Request) {
	c, err := a.authenticate(r)
	if err != nil {
		a.failMemory(w, r, err)
		return
	}
	// A body may carry removals besides the stored total, so it may be
	// somewhat larger than the limit; far larger is refused unread.
	limit := int64(2*a.d.Memory.Limits().MaxTotalBytes + 4096)
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		a.failMemory(w, r, errs.New(errs.KindTooLarge, "body larger than %d bytes", limit))
		return
	}
	if err != nil {
		a.failMemory(w, r, errs.New(errs.KindInvalid, "cannot read the body"))
		return
	}
	m, err := a.d.Memory.Update(r.Context(), c.Subject, raw)
	if err != nil {
		a.failMemory(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoryBody(m))
}

// deleteMemory clears the caller's memory.
func (a *authAPI) deleteMemory(w http.ResponseWriter, r *http.Request) {
	c, err := a.authenticate(r)
	if err != nil {
		a.failMemory(w, r, err)
		return
	}
	if err := a.d.Memory.Clear(r.Context(), c.Subject); err != nil {
		a.failMemory(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoryBody(auth.Memory{}))
}
