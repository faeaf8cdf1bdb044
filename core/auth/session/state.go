package session

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// StateTTL is how long a login may take between start and callback.
const StateTTL = 10 * time.Minute

// FlowState is what the start of a login binds to the browser: the state
// the provider must echo, the PKCE verifier, the nonce an OpenID Connect
// ID token must carry, and the CAT whose settings apply. It travels in a signed cookie, so the server keeps nothing per
// login that is started and never finished.
type FlowState struct {
	Provider  string    `json:"p"`
	Cat       string    `json:"c"`
	State     string    `json:"s"`
	Verifier  string    `json:"v"`
	Nonce     string    `json:"n"`
	ExpiresAt time.Time `json:"e"`
}

// StateSealer creates and checks FlowStates. Its key is derived from the
// token secret with a label, so a sealed state can never pass for a token.
type StateSealer struct {
	key   []byte
	clock ports.Clock
}

// NewStateSealer derives the sealing key from secret.
func NewStateSealer(secret []byte, clock ports.Clock) *StateSealer {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("catsrv login state v1"))
	return &StateSealer{key: mac.Sum(nil), clock: clock}
}

// Begin creates the state of a new login with a random state, PKCE
// verifier and nonce, and its sealed (cookie) form.
func (s *StateSealer) Begin(provider, cat string) (FlowState, string, error) {
	state, err := RandomToken()
	if err != nil {
		return FlowState{}, "", err
	}
	verifier, err := RandomToken()
	if err != nil {
		return FlowState{}, "", err
	}
	nonce, err := RandomToken()
	if err != nil {
		return FlowState{}, "", err
	}
	fs := FlowState{Provider: provider, Cat: cat, State: state, Verifier: verifier, Nonce: nonce,
		ExpiresAt: s.clock.Now().Add(StateTTL).UTC().Truncate(time.Second)}
	payload, err := json.Marshal(fs)
	if err != nil {
		return FlowState{}, "", errs.Wrap(errs.KindInternal, err, "cannot seal login state")
	}
	enc := base64.RawURLEncoding.EncodeToString(payload)
	return fs, enc + "." + s.sign(enc), nil
}

// Open checks a sealed state against the callback of provider carrying
// state: a missing, tampered or foreign cookie, or a state that does not
// match, is errs.KindInvalid; an expired one errs.KindUnauthorized.
func (s *StateSealer) Open(sealed, provider, state string) (FlowState, error) {
	if sealed == "" {
		return FlowState{}, errs.New(errs.KindInvalid, "login state cookie missing: start the login again from this browser")
	}
	enc, sig, ok := strings.Cut(sealed, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.sign(enc))) {
		return FlowState{}, errs.New(errs.KindInvalid, "login state cookie is not valid: start the login again")
	}
	payload, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return FlowState{}, errs.New(errs.KindInvalid, "login state cookie is not valid: start the login again")
	}
	var fs FlowState
	if err := json.Unmarshal(payload, &fs); err != nil {
		return FlowState{}, errs.New(errs.KindInvalid, "login state cookie is not valid: start the login again")
	}
	if fs.Provider != provider {
		return FlowState{}, errs.New(errs.KindInvalid, "login state belongs to another provider: start the login again")
	}
	if state == "" || subtle.ConstantTimeCompare([]byte(fs.State), []byte(state)) != 1 {
		return FlowState{}, errs.New(errs.KindInvalid, "state mismatch: the callback does not belong to the login started in this browser")
	}
	if !s.clock.Now().Before(fs.ExpiresAt) {
		return FlowState{}, errs.New(errs.KindUnauthorized, "login expired: it must finish within %s of its start", StateTTL)
	}
	return fs, nil
}

func (s *StateSealer) sign(enc string) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(enc))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// RandomToken returns 32 random bytes, base64url: a login state, a PKCE
// verifier (43 characters, as RFC 7636 asks) or a refresh token.
func RandomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", errs.Wrap(errs.KindInternal, err, "no randomness")
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is the stored form of an opaque token: hex SHA-256. The token
// has 256 random bits, so a plain hash is enough to make a leaked table
// useless.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
