package main

import (
	"strings"
	"testing"
)

// TestCommandHelpAndBadFlags drives every subcommand of the real binary:
// --help and -h print that command's usage and flags on stdout and exit 0;
// an unknown flag prints the error and that command's usage on stderr and
// exits 2.
func TestCommandHelpAndBadFlags(t *testing.T) {
	t.Parallel()
	flags := map[string][]string{
		"serve":       {"-config", "-db", "-addr"},
		"import":      {"-config", "-db", "-skip-invalid"},
		"demo":        {"-interactions", "-cats", "-days", "-seed"},
		"token":       {"-config", "-subject", "-role", "-cats", "-ttl"},
		"openapi":     {},
		"audit":       {"-db", "-since", "-user", "-limit", "-json"},
		"erase":       {"-db", "-user"},
		"version":     {},
		"healthcheck": {"-addr"},
	}
	for cmd, want := range flags {
		for _, help := range []string{"--help", "-h"} {
			t.Run(cmd+" "+help, func(t *testing.T) {
				res := catsrv(t, nil, nil, cmd, help)
				if res.code != 0 || res.stderr != "" {
					t.Fatalf("exit %d (want 0), stderr %q", res.code, res.stderr)
				}
				if !strings.HasPrefix(res.stdout, "Usage: catsrv "+cmd) {
					t.Fatalf("stdout does not start with the usage of %s:\n%s", cmd, res.stdout)
				}
				for _, f := range want {
					if !strings.Contains(res.stdout, "  "+f+" ") && !strings.Contains(res.stdout, "  "+f+"\n") {
						t.Errorf("help of %s lacks flag %s:\n%s", cmd, f, res.stdout)
					}
				}
				for other := range flags {
					if other != cmd && strings.Contains(res.stdout, "catsrv "+other) {
						t.Errorf("help of %s shows the usage of %s:\n%s", cmd, other, res.stdout)
					}
				}
			})
		}
		t.Run(cmd+" bad flag", func(t *testing.T) {
			res := catsrv(t, nil, nil, cmd, "--no-such-flag")
			if res.code != 2 || res.stdout != "" {
				t.Fatalf("exit %d (want 2), stdout %q", res.code, res.stdout)
			}
			for _, w := range []string{"flag provided but not defined: -no-such-flag", "Usage: catsrv " + cmd} {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			for other := range flags {
				if other != cmd && strings.Contains(res.stderr, "catsrv "+other) {
					t.Errorf("the usage of %s shows %s:\n%s", cmd, other, res.stderr)
				}
			}
		})
	}
}
