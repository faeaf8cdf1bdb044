package auth

import (
	"slices"

	"github.com/catsrv/catsrv/core/errs"
)

// MayReadAnalytics is the rule of who reads a CAT's analytics: anyone when
// the CAT's configuration makes them public (security.analytics.public),
// otherwise an admin only. who is the caller's verified claims and whoErr
// why there are none (no token, a bad or revoked one): a public CAT needs
// neither, and for a private one whoErr is the answer (401) before the role
// is checked (403).
func MayReadAnalytics(public bool, who Claims, whoErr error) error {
	if public {
		return nil
	}
	if whoErr != nil {
		return whoErr
	}
	return RequireAdmin(who)
}

// MayIngest is the rule of who stores interactions into a CAT over the
// API: an admin, or an ingest token naming the CAT. whoErr (no token, a
// bad one) is the answer before the role is checked.
func MayIngest(cat string, who Claims, whoErr error) error {
	if whoErr != nil {
		return whoErr
	}
	switch who.Role {
	case RoleAdmin:
		return nil
	case RoleIngest:
		if slices.Contains(who.Cats, cat) {
			return nil
		}
		return errs.New(errs.KindForbidden, "this ingest token may not ingest into this CAT")
	}
	return errs.New(errs.KindForbidden, "ingesting needs the admin role or an ingest token for the CAT")
}

// MayCall is the rule of which operations a caller's role allows at all:
// an ingest token only ingests (ingests: the operation stores
// interactions); every other role is limited by the operation itself.
func MayCall(who Claims, ingests bool) error {
	if who.Role == RoleIngest && !ingests {
		return errs.New(errs.KindForbidden, "an ingest token may only ingest interactions")
	}
	return nil
}

// ValidIngestCats checks the CAT list of an ingest token: at least one,
// none empty or repeated.
func ValidIngestCats(cats []string) error {
	if len(cats) == 0 {
		return errs.New(errs.KindInvalid, "an ingest token needs the CATs it may ingest into")
	}
	for k, c := range cats {
		if c == "" || slices.Contains(cats[:k], c) {
			return errs.New(errs.KindInvalid, "the CATs of an ingest token must be distinct names")
		}
	}
	return nil
}
