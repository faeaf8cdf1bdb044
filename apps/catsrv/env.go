package main

import (
	"fmt"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/auth/tokens"
)

// environ is the process environment in os.Environ form, passed in so
// tests can supply their own. Only config.Load reads it.
type environ []string

// tokenService builds the access token service from CATSRV_JWT_SECRET
// (or CATSRV_JWT_SECRET_FILE).
func tokenService(cfg *config.Config) (*tokens.Service, error) {
	secret := cfg.JWTSecret.Value()
	if secret == "" {
		return nil, fmt.Errorf("CATSRV_JWT_SECRET is not set and CATSRV_JWT_SECRET_FILE (%s) does not exist: export a random secret of at least 32 bytes (e.g. `openssl rand -hex 32`)", cfg.JWTSecretFile)
	}
	return tokens.New([]byte(secret), cfg.JWTIssuer, cfg.JWTAudience, clock.System{})
}

// loadCats loads the CAT directory with the configuration's overrides.
func loadCats(cfg *config.Config) (*catfiles.Directory, error) {
	cats, err := catfiles.Load(cfg.ConfigDir, cfg.CatOverrides)
	if err != nil {
		return nil, fmt.Errorf("loading CAT configuration from %s: %w", cfg.ConfigDir, err)
	}
	return cats, nil
}
