package auth

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
