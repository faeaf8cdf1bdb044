package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/catsrv/catsrv/core/errs"
)

func TestKindOfAndPublicMessage(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.1:5432: secret detail")
	tests := []struct {
		name     string
		err      error
		wantKind errs.Kind
		wantMsg  string
	}{
		{"plain error is internal", cause, errs.KindInternal, "fallback"},
		{"kinded", errs.New(errs.KindNotFound, "no %s", "thing"), errs.KindNotFound, "no thing"},
		{"wrapped by fmt", fmt.Errorf("ctx: %w", errs.New(errs.KindInvalid, "bad")), errs.KindInvalid, "bad"},
		{"internal hides its message", errs.Wrap(errs.KindInternal, cause, "store failed"), errs.KindInternal, "fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errs.KindOf(tt.err); got != tt.wantKind {
				t.Fatalf("KindOf = %v, want %v", got, tt.wantKind)
			}
			if got := errs.PublicMessage(tt.err, "fallback"); got != tt.wantMsg {
				t.Fatalf("PublicMessage = %q, want %q", got, tt.wantMsg)
			}
		})
	}
	w := errs.Wrap(errs.KindUnavailable, cause, "db down")
	if !errors.Is(w, cause) || w.Error() != "db down: "+cause.Error() {
		t.Fatalf("wrap lost its cause: %v", w)
	}
	if errs.KindUnavailable.String() != "unavailable" {
		t.Fatal("kind name")
	}
}

func TestTemporary(t *testing.T) {
	cause := errors.New("connection reset")
	e := errs.Wrap(errs.KindUnavailable, errs.Temporary(cause), "try again shortly")
	if !errors.Is(e, errs.ErrTemporary) || !errors.Is(e, cause) {
		t.Fatalf("a temporary error lost its mark or its cause: %v", e)
	}
	if errs.PublicMessage(e, "fallback") != "try again shortly" {
		t.Fatalf("the mark changed the public message: %q", errs.PublicMessage(e, "fallback"))
	}
	if errors.Is(errs.Wrap(errs.KindUnavailable, cause, "not configured"), errs.ErrTemporary) {
		t.Fatal("an unmarked error is temporary")
	}
	if !errors.Is(errs.Temporary(nil), errs.ErrTemporary) {
		t.Fatal("Temporary(nil) is not temporary")
	}
}
