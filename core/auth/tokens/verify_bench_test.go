package tokens_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth/tokens"
)

// newBenchService returns a token service on a fixed clock, with a secret
// of its own so the benchmark does not depend on the tests' fixtures.
func newBenchService() (*tokens.Service, error) {
	return tokens.New([]byte("benchmark-secret-0123456789abcdef-0123456789"), "catsrv", "catsrv",
		clock.NewFixed(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)))
}

// BenchmarkVerify is the cost every authenticated request pays for its
// access token.
func BenchmarkVerify(b *testing.B) {
	s, err := newBenchService()
	if err != nil {
		b.Fatal(err)
	}
	token, _, err := s.Issue("bench-user", "admin", time.Hour)
	if err != nil {
		b.Fatalf("Issue: %v", err)
	}
	b.Run("Verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Verify(token); err != nil {
				b.Fatalf("Verify: %v", err)
			}
		}
	})
	b.Run("VerifyBearer", func(b *testing.B) {
		header := "Bearer " + token
		for b.Loop() {
			if _, err := s.VerifyBearer(header); err != nil {
				b.Fatalf("VerifyBearer: %v", err)
			}
		}
	})
}
