package auth_test

import (
	"errors"
	"testing"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

func TestMayReadAnalytics(t *testing.T) {
	admin := auth.Claims{Subject: "a", Role: auth.RoleAdmin}
	user := auth.Claims{Subject: "u", Role: "user"}
	badToken := errs.New(errs.KindUnauthorized, "invalid token: expired")
	cases := []struct {
		name   string
		public bool
		who    auth.Claims
		whoErr error
		want   errs.Kind // when refused
		ok     bool
	}{
		{"public, anonymous", true, auth.Claims{}, auth.ErrNoCredentials, 0, true},
		{"public, bad token", true, auth.Claims{}, badToken, 0, true},
		{"public, user", true, user, nil, 0, true},
		{"private, admin", false, admin, nil, 0, true},
		{"private, user", false, user, nil, errs.KindForbidden, false},
		{"private, anonymous", false, auth.Claims{}, auth.ErrNoCredentials, errs.KindUnauthorized, false},
		{"private, bad token", false, auth.Claims{}, badToken, errs.KindUnauthorized, false},
		// The reason there are no claims wins over whatever claims came along.
		{"private, admin claims with an error", false, admin, badToken, errs.KindUnauthorized, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := auth.MayReadAnalytics(c.public, c.who, c.whoErr)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || errs.KindOf(err) != c.want {
				t.Fatalf("error %v (kind %v), want kind %v", err, errs.KindOf(err), c.want)
			}
			if c.whoErr != nil && !errors.Is(err, c.whoErr) {
				t.Errorf("error %v, want the authentication error %v", err, c.whoErr)
			}
		})
	}
}

func TestMayIngest(t *testing.T) {
	admin := auth.Claims{Subject: "a", Role: auth.RoleAdmin}
	feeder := auth.Claims{Subject: "f", Role: auth.RoleIngest, Cats: []string{"a", "b"}}
	user := auth.Claims{Subject: "u", Role: "user"}
	badToken := errs.New(errs.KindUnauthorized, "invalid token: expired")
	cases := []struct {
		name   string
		cat    string
		who    auth.Claims
		whoErr error
		want   errs.Kind // 0: allowed
	}{
		{"admin", "z", admin, nil, 0},
		{"ingest, named CAT", "b", feeder, nil, 0},
		{"ingest, other CAT", "z", feeder, nil, errs.KindForbidden},
		{"ingest without CATs", "a", auth.Claims{Subject: "f", Role: auth.RoleIngest}, nil, errs.KindForbidden},
		{"user", "a", user, nil, errs.KindForbidden},
		{"anonymous", "a", auth.Claims{}, auth.ErrNoCredentials, errs.KindUnauthorized},
		{"bad token", "a", admin, badToken, errs.KindUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := auth.MayIngest(c.cat, c.who, c.whoErr)
			if c.want == 0 && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if c.want != 0 && errs.KindOf(err) != c.want {
				t.Fatalf("got %v, want kind %v", err, c.want)
			}
		})
	}
}

func TestMayCall(t *testing.T) {
	feeder := auth.Claims{Subject: "f", Role: auth.RoleIngest, Cats: []string{"a"}}
	if err := auth.MayCall(feeder, true); err != nil {
		t.Errorf("ingest token on the ingest route: %v", err)
	}
	if err := auth.MayCall(feeder, false); errs.KindOf(err) != errs.KindForbidden {
		t.Errorf("ingest token on another route: %v, want forbidden", err)
	}
	for _, role := range []string{auth.RoleAdmin, "user", ""} {
		if err := auth.MayCall(auth.Claims{Role: role}, false); err != nil {
			t.Errorf("role %q on another route: %v", role, err)
		}
	}
}
