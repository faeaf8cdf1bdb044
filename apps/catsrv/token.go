package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/auth"
)

func tokenCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	fs := newFlags("token")
	config.AddFlags(fs.FlagSet, "config")
	subject := fs.String("subject", "", "token subject (required)")
	role := fs.String("role", "", "role claim: admin, user, or ingest with --cats (required)")
	catList := fs.String("cats", "", "with --role ingest: the comma-separated CATs the token may ingest into")
	ttl := fs.Duration("ttl", 0, "lifetime, e.g. 24h (default: the shortest security.jwt.expiration_hours of the CATs)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *subject == "" || *role == "" || fs.NArg() > 0 {
		return fs.misuse("token needs --subject and --role")
	}
	if !slices.Contains(auth.Roles, *role) {
		return fs.misuse("--role %q is not a role catsrv knows: one of %s", *role, strings.Join(auth.Roles, ", "))
	}
	if *ttl < 0 {
		return fs.misuse("--ttl must be positive")
	}
	var cats []string
	if *catList != "" {
		cats = strings.Split(*catList, ",")
	}
	switch {
	case *role == auth.RoleIngest && len(cats) == 0:
		return fs.misuse("--role ingest needs --cats a,b: the CATs the token may ingest into")
	case *role != auth.RoleIngest && len(cats) > 0:
		return fs.misuse("--cats goes with --role ingest only")
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
	if err := knownCats(ctx, cfg, cats); err != nil {
		return err
	}
	toks, err := tokenService(cfg)
	if err != nil {
		return err
	}
	var signed string
	var claims auth.Claims
	if *role == auth.RoleIngest {
		signed, claims, err = toks.IssueIngest(*subject, cats, *ttl)
	} else {
		signed, claims, err = toks.Issue(*subject, *role, *ttl)
	}
	if err != nil {
		return err
	}
	scope := ""
	if len(claims.Cats) > 0 {
		scope = ", CATs " + strings.Join(claims.Cats, ",")
	}
	_, err = fmt.Fprintf(stdout, "# subject %s, role %s%s, expires %s\n%s\n", claims.Subject, claims.Role, scope, claims.ExpiresAt.Format(time.RFC3339), signed)
	return err
}

// knownCats checks that every CAT an ingest token names is configured.
func knownCats(ctx context.Context, cfg *config.Config, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if err := auth.ValidIngestCats(names); err != nil {
		return err
	}
	cats, err := loadCats(cfg)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := cats.Cat(ctx, name); err != nil {
			return fmt.Errorf("--cats: CAT %q: %w", name, err)
		}
	}
	return nil
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
