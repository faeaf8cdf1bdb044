package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// maxSecretFile bounds what is read of CATSRV_JWT_SECRET_FILE.
const maxSecretFile = 4096

// readJWTSecretFile reads the JWT secret from CATSRV_JWT_SECRET_FILE when
// CATSRV_JWT_SECRET is unset and the file exists: `make run` keeps the
// secret it generates in ./data/jwt-secret (the default), so that its
// tokens survive a restart and `catsrv token` in a second terminal signs
// with the same secret; a container or a systemd unit can point it at a
// mounted secret. The variable wins over the file; surrounding white
// space is not part of the secret.
func (c *Config) readJWTSecretFile() error {
	if c.JWTSecret.Value() != "" || c.JWTSecretFile == "" {
		return nil
	}
	f, err := os.Open(c.JWTSecretFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("CATSRV_JWT_SECRET_FILE: %w", err)
	}
	defer func() { _ = f.Close() }()
	raw, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	switch {
	case err != nil:
		return fmt.Errorf("CATSRV_JWT_SECRET_FILE %s: %w", c.JWTSecretFile, err)
	case len(raw) > maxSecretFile:
		return fmt.Errorf("CATSRV_JWT_SECRET_FILE %s is over %d bytes: want the secret alone", c.JWTSecretFile, maxSecretFile)
	}
	c.JWTSecret = Secret{strings.TrimSpace(string(raw))}
	return nil
}
