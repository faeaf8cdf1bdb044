// Package tokens issues and verifies catsrv's access tokens: JWTs signed
// with HS256 and a secret of at least 32 bytes, carrying sub, role, iat,
// exp, jti, iss and aud.
package tokens

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// MinSecretBytes is the shortest signing secret accepted: HS256 needs at
// least as many bytes of key as its output to keep its strength.
const MinSecretBytes = 32

// Leeway is the clock skew tolerated on exp, nbf and iat.
const Leeway = 30 * time.Second

// Service issues and verifies access tokens.
type Service struct {
	secret   []byte
	issuer   string
	audience string
	clock    ports.Clock
}

// New returns a token service. It refuses a secret shorter than
// MinSecretBytes.
func New(secret []byte, issuer, audience string, clock ports.Clock) (*Service, error) {
	if len(secret) < MinSecretBytes {
		return nil, errs.New(errs.KindInvalid, "JWT secret must be at least %d bytes", MinSecretBytes)
	}
	return &Service{secret: secret, issuer: issuer, audience: audience, clock: clock}, nil
}

type registered struct {
	Role      string   `json:"role"`
	SessionID string   `json:"sid,omitempty"`
	Cats      []string `json:"cats,omitempty"`
	jwt.RegisteredClaims
}

// numericDates are the claims that must be JSON numbers (RFC 7519 §2,
// NumericDate), read by the same (case-insensitive) rules as the claims
// themselves.
type numericDates struct {
	Exp json.RawMessage `json:"exp"`
	Nbf json.RawMessage `json:"nbf"`
	Iat json.RawMessage `json:"iat"`
}

// UnmarshalJSON refuses an exp, nbf or iat that is not a JSON number:
// jwt.NumericDate alone also takes a number in a string ("9999999999").
func (r *registered) UnmarshalJSON(b []byte) error {
	var d numericDates
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	for _, c := range [...]struct {
		name  string
		value json.RawMessage
	}{{"exp", d.Exp}, {"nbf", d.Nbf}, {"iat", d.Iat}} {
		if c.value != nil && !isJSONNumber(c.value) {
			return fmt.Errorf("%w: %s", errNotNumericDate, c.name)
		}
	}
	type plain registered // without this method
	return json.Unmarshal(b, (*plain)(r))
}

// isJSONNumber reports whether v, a valid JSON value, is a number: the
// only JSON values that start with '-' or a digit.
func isJSONNumber(v json.RawMessage) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && (v[0] == '-' || ('0' <= v[0] && v[0] <= '9'))
}

var (
	errNotNumericDate = errors.New("claim is not a JSON number")
	errCritical       = errors.New("critical header parameters are not supported")
)

// refuseCritical is the key function: catsrv understands no JWS
// extension, so a token with a crit header parameter (even an empty
// list, which RFC 7515 §4.1.11 forbids) is refused, whatever it names.
func (s *Service) refuseCritical(t *jwt.Token) (any, error) {
	if _, ok := t.Header["crit"]; ok {
		return nil, errCritical
	}
	return s.secret, nil
}

// Issue signs a token for subject with role, valid for ttl from now.
func (s *Service) Issue(subject, role string, ttl time.Duration) (string, auth.Claims, error) {
	return s.IssueForSession(subject, role, "", ttl)
}

// IssueForSession is Issue for a token that belongs to a login session:
// the session id travels in the "sid" claim.
func (s *Service) IssueForSession(subject, role, sessionID string, ttl time.Duration) (string, auth.Claims, error) {
	return s.issue(subject, role, sessionID, nil, ttl)
}

// IssueIngest signs a token of role auth.RoleIngest that may ingest into
// cats (the "cats" claim), valid for ttl from now.
func (s *Service) IssueIngest(subject string, cats []string, ttl time.Duration) (string, auth.Claims, error) {
	if err := auth.ValidIngestCats(cats); err != nil {
		return "", auth.Claims{}, err
	}
	return s.issue(subject, auth.RoleIngest, "", slices.Clone(cats), ttl)
}

func (s *Service) issue(subject, role, sessionID string, cats []string, ttl time.Duration) (string, auth.Claims, error) {
	if subject == "" || role == "" || ttl <= 0 {
		return "", auth.Claims{}, errs.New(errs.KindInvalid, "a token needs a subject, a role and a positive lifetime")
	}
	now := s.clock.Now().UTC().Truncate(time.Second)
	id, err := randomID()
	if err != nil {
		return "", auth.Claims{}, errs.Wrap(errs.KindInternal, err, "cannot create token id")
	}
	c := auth.Claims{Subject: subject, Role: role, ID: id, SessionID: sessionID, Cats: cats, IssuedAt: now, ExpiresAt: now.Add(ttl)}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, registered{
		Role:      role,
		SessionID: sessionID,
		Cats:      cats,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   subject,
			Issuer:    s.issuer,
			Audience:  jwt.ClaimStrings{s.audience},
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			NotBefore: jwt.NewNumericDate(c.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
			ID:        id,
		},
	})
	signed, err := tok.SignedString(s.secret)
	if err != nil {
		return "", auth.Claims{}, errs.Wrap(errs.KindInternal, err, "cannot sign token")
	}
	return signed, c, nil
}

// Verify checks a token's signature (HS256 only), expiry (required),
// not-before, issued-at, issuer and audience, and returns its claims. exp,
// nbf and iat must be JSON numbers, and a token with a crit header is
// refused.
func (s *Service) Verify(token string) (auth.Claims, error) {
	var rc registered
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(s.issuer),
		jwt.WithAudience(s.audience),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(s.clock.Now),
	)
	_, err := parser.ParseWithClaims(token, &rc, s.refuseCritical)
	if err != nil {
		return auth.Claims{}, errs.Wrap(errs.KindUnauthorized, err, reason(err))
	}
	if rc.Subject == "" || rc.ID == "" {
		return auth.Claims{}, errs.New(errs.KindUnauthorized, "invalid token: missing sub or jti")
	}
	c := auth.Claims{Subject: rc.Subject, Role: rc.Role, ID: rc.ID, SessionID: rc.SessionID, Cats: rc.Cats, ExpiresAt: rc.ExpiresAt.Time}
	if rc.IssuedAt != nil {
		c.IssuedAt = rc.IssuedAt.Time
	}
	return c, nil
}

// VerifyBearer verifies the token of an Authorization header value
// ("Bearer <token>").
func (s *Service) VerifyBearer(header string) (auth.Claims, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if header == "" {
		return auth.Claims{}, auth.ErrNoCredentials
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return auth.Claims{}, errs.New(errs.KindUnauthorized, "malformed Authorization header: expected Bearer <token>")
	}
	return s.Verify(strings.TrimSpace(token))
}

// reason turns a jwt error into a short client-safe reason.
func reason(err error) string {
	switch {
	case errors.Is(err, errCritical):
		return "invalid token: unsupported critical header"
	case errors.Is(err, errNotNumericDate):
		return "invalid token: exp, nbf and iat must be numbers"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "invalid token: expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "invalid token: not valid yet"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "invalid token: bad signature or algorithm"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "invalid token: missing required claim"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "invalid token: wrong issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "invalid token: wrong audience"
	}
	return "invalid token"
}

func randomID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
