package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/catsrv/catsrv/adapters/catfiles"
	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth/tokens"
)

// Defaults of the binary contract; environment variables may change them.
const (
	defaultConfigDir = "./configs"
	defaultDSN       = "sqlite:./data/catsrv.db"
	defaultAddr      = "127.0.0.1:8080"
	tokenIssuer      = "catsrv"
	tokenAudience    = "catsrv"
)

// environ is the process environment in os.Environ form, passed in so
// tests can supply their own.
type environ []string

func (e environ) get(key, fallback string) string {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key && v != "" {
			return v
		}
	}
	return fallback
}

// tokenService builds the access token service from CATSRV_JWT_SECRET.
func (e environ) tokenService() (*tokens.Service, error) {
	secret := e.get("CATSRV_JWT_SECRET", "")
	if secret == "" {
		return nil, errors.New("CATSRV_JWT_SECRET is not set: export a random secret of at least 32 bytes (e.g. `openssl rand -hex 32`)")
	}
	return tokens.New([]byte(secret), e.get("CATSRV_JWT_ISSUER", tokenIssuer), e.get("CATSRV_JWT_AUDIENCE", tokenAudience), clock.System{})
}

// loadCats loads the CAT directory.
func (e environ) loadCats(dir string) (*catfiles.Directory, error) {
	cats, err := catfiles.Load(dir, e)
	if err != nil {
		return nil, fmt.Errorf("loading CAT configuration from %s: %w", dir, err)
	}
	return cats, nil
}
