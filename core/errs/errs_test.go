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
