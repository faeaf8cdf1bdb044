package session_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/errs"
)

func TestStateSealer(t *testing.T) {
	now := t0
	sealer := session.NewStateSealer([]byte(secret), clockAt{&now})
	fs, sealed, err := sealer.Begin("provider_a", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.State) != 43 || len(fs.Verifier) != 43 || len(fs.Nonce) != 43 || fs.State == fs.Verifier || fs.Nonce == fs.State || fs.Nonce == fs.Verifier ||
		!fs.ExpiresAt.Equal(t0.Add(session.StateTTL)) {
		t.Fatalf("flow state %+v", fs)
	}
	enc, sig, _ := strings.Cut(sealed, ".")
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"p":"provider_a","c":"shop","s":"mine","v":"x","e":"2099-01-01T00:00:00Z"}`))
	other := session.NewStateSealer([]byte(strings.Repeat("z", 40)), clockAt{&now})
	_, otherSealed, err := other.Begin("provider_a", "shop")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		sealed, provider string
		state            string
		advance          time.Duration
		kind             errs.Kind // 0 (internal) never expected: success is marked by ok
		ok               bool
	}{
		{"valid", sealed, "provider_a", fs.State, 0, 0, true},
		{"just before expiry", sealed, "provider_a", fs.State, session.StateTTL - time.Second, 0, true},
		{"expired", sealed, "provider_a", fs.State, session.StateTTL, errs.KindUnauthorized, false},
		{"missing cookie", "", "provider_a", fs.State, 0, errs.KindInvalid, false},
		{"state mismatch", sealed, "provider_a", fs.State + "x", 0, errs.KindInvalid, false},
		{"empty state", sealed, "provider_a", "", 0, errs.KindInvalid, false},
		{"other provider", sealed, "provider_b", fs.State, 0, errs.KindInvalid, false},
		{"forged payload", forged + "." + sig, "provider_a", "mine", 0, errs.KindInvalid, false},
		{"signature removed", enc, "provider_a", fs.State, 0, errs.KindInvalid, false},
		{"sealed with another key", otherSealed, "provider_a", fs.State, 0, errs.KindInvalid, false},
		{"garbage", "%%%.###", "provider_a", fs.State, 0, errs.KindInvalid, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now = t0.Add(c.advance)
			got, err := sealer.Open(c.sealed, c.provider, c.state)
			if c.ok {
				if err != nil || got != fs {
					t.Fatalf("Open = %+v, %v; want %+v", got, err, fs)
				}
				return
			}
			if errs.KindOf(err) != c.kind {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
		})
	}
}
