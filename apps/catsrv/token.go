package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
)

func tokenCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	fs := newFlags("token")
	config.AddFlags(fs.FlagSet, "config")
	subject := fs.String("subject", "", "token subject (required)")
	role := fs.String("role", "", "role claim, e.g. admin (required)")
	ttl := fs.Duration("ttl", 0, "lifetime, e.g. 24h (default: the shortest security.jwt.expiration_hours of the CATs)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *subject == "" || *role == "" || fs.NArg() > 0 {
		return fs.misuse("token needs --subject and --role")
	}
	if *ttl < 0 {
		return fs.misuse("--ttl must be positive")
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	if *ttl == 0 {
		lifetime, err := defaultTokenLifetime(ctx, cfg)
		if err != nil {
			return err
		}
		*ttl = lifetime
	}
	toks, err := tokenService(cfg)
	if err != nil {
		return err
	}
	signed, claims, err := toks.Issue(*subject, *role, *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "# subject %s, role %s, expires %s\n%s\n", claims.Subject, claims.Role, claims.ExpiresAt.Format(time.RFC3339), signed)
	return err
}

// defaultTokenLifetime is the shortest access token lifetime any CAT allows,
// 24 hours when no CAT is configured.
func defaultTokenLifetime(ctx context.Context, cfg *config.Config) (time.Duration, error) {
	cats, err := loadCats(cfg)
	if err != nil {
		return 0, err
	}
	all, err := cats.Cats(ctx)
	if err != nil {
		return 0, err
	}
	hours := 24
	for i, c := range all {
		if h := c.Security.JWT.ExpirationHours; i == 0 || h < hours {
			hours = h
		}
	}
	return time.Duration(hours) * time.Hour, nil
}
