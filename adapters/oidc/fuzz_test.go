package oidc_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/adapters/oidc/oidctest"
	"github.com/catsrv/catsrv/core/errs"
)

// FuzzIDToken feeds Exchange the ID tokens a provider could send: with raw
// empty, the claims payload signed with the provider's real key (so the
// claim checks run on any JSON), else raw as the whole token. In the
// payload, {{iss}} and {{aud}} stand for the provider's issuer and the
// client id. Exchange never fails otherwise than unauthorized, its message
// stays short and never repeats the token, and a login it accepts has a
// payload that passes every check: issuer, audience, subject, nonce and,
// with several audiences, azp.
func FuzzIDToken(f *testing.F) {
	forger := oidctest.NewForger(f, clientID, secret)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: forger.Key, KeyID: forger.KeyID}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	p, err := oidc.New(oidc.Config{Name: "corp", Issuer: forger.Issuer, ClientID: clientID, ClientSecret: secret, RedirectURL: redirect})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"iss":"{{iss}}","aud":"{{aud}}","sub":"s","nonce":"n","iat":1700000000,"exp":4102444800}`), "")
	f.Add([]byte(`{"iss":"{{iss}}","aud":["{{aud}}","x"],"azp":7,"sub":"s","nonce":"n","iat":1700000000,"exp":4102444800}`), "")
	f.Add([]byte{}, "eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, payload []byte, raw string) {
		payload = bytes.ReplaceAll(payload, []byte("{{iss}}"), []byte(forger.Issuer))
		payload = bytes.ReplaceAll(payload, []byte("{{aud}}"), []byte(clientID))
		token := raw
		if token == "" {
			obj, err := signer.Sign(payload)
			if err != nil {
				t.Skip() // nothing to send
			}
			if token, err = obj.CompactSerialize(); err != nil {
				t.Fatal(err)
			}
		}
		forger.SetIDToken(token)
		id, err := p.Exchange(t.Context(), "code", "verifier", "n")
		if err != nil {
			msg := errs.PublicMessage(err, "")
			if errs.KindOf(err) != errs.KindUnauthorized || len(msg) > 400 || (len(token) > 20 && strings.Contains(msg, token)) {
				t.Fatalf("Exchange of %q: %v (%s, message %q)", token, err, errs.KindOf(err), msg)
			}
			return
		}
		if raw != "" {
			t.Fatalf("a token signed by nobody signed %+v in", id)
		}
		var claims struct {
			Iss   string          `json:"iss"`
			Sub   string          `json:"sub"`
			Nonce string          `json:"nonce"`
			Azp   string          `json:"azp"`
			Aud   json.RawMessage `json:"aud"`
		}
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatalf("accepted a payload that is not the claims: %q", payload)
		}
		var aud []string
		if err := json.Unmarshal(claims.Aud, &aud); err != nil {
			var one string
			if json.Unmarshal(claims.Aud, &one) == nil {
				aud = []string{one}
			}
		}
		if claims.Iss != forger.Issuer || claims.Sub == "" || claims.Sub != id.Subject || claims.Nonce != "n" || !slices.Contains(aud, clientID) ||
			(len(aud) > 1 && claims.Azp != clientID) || id.Provider != "corp" {
			t.Fatalf("accepted %q as %+v", payload, id)
		}
	})
}
