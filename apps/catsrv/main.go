// Command catsrv is the catsrv service binary: the HTTP app (serve) and the
// operator's tools (import, demo, token, openapi, audit, erase, eval,
// version, healthcheck). It is the one composition root: the only place
// adapters are chosen and wired into core services.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
)

// commands are the subcommands in the order the usage lists them.
var commands = []struct{ name, synopsis string }{
	{"serve", "[--config DIR] [--db DSN] [--addr HOST:PORT]"},
	{"import", "[--config DIR] [--db DSN] [--skip-invalid] FILE|-"},
	{"demo", "[--interactions N] [--cats a,b] [--days D] [--seed S]"},
	{"token", "[--config DIR] --subject S --role R [--cats A,B] [--ttl D]"},
	{"openapi", ""},
	{"audit", "[--db DSN] [--since D] [--user U] [--limit N] [--json]"},
	{"erase", "[--db DSN] --user PROVIDER:SUBJECT|ID"},
	{"eval", "retrieval [--config DIR] --cat X [--db DSN] [--k N] GOLDEN.jsonl"},
	{"version", ""},
	{"healthcheck", "[--addr HOST:PORT]"},
}

// usage is the general usage text: every command, the main variables.
var usage = func() string {
	var b strings.Builder
	b.WriteString("catsrv — analytics, chat and authentication back end for chat assistants\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(fmt.Sprintf("catsrv %-8s%s", c.name, c.synopsis)))
	}
	b.WriteString(`  catsrv COMMAND --help

Environment:
  CATSRV_JWT_SECRET    HS256 signing secret, at least 32 bytes (serve, token)
  CATSRV_JWT_SECRET_FILE  file read for it when unset (./data/jwt-secret, where make run keeps one)
  CATSRV_CONFIG_DIR    default for --config (./configs)
  CATSRV_DB            default for --db (sqlite:./data/catsrv.db); keeps passwords off the command line
  CATSRV_ADDR          default for --addr (127.0.0.1:8080)
  CATSRV_PROVIDER_*    identity provider credentials (serve); see docs/auth.md
  See docs/operations.md for every setting.
`)
	return b.String()
}()

// errUsage marks a command-line mistake: exit status 2 and the usage text.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], environ(os.Environ()), os.Stdin, os.Stdout, os.Stderr)
	stop()
	var misuse *usageError
	switch {
	case err == nil:
	case errors.As(err, &misuse):
		fmt.Fprintln(os.Stderr, "catsrv:", misuse.msg)
		fmt.Fprint(os.Stderr, misuse.usage)
		os.Exit(2)
	case errors.Is(err, errUsage):
		if err != errUsage { //nolint:errorlint // the bare sentinel has nothing to add
			fmt.Fprintln(os.Stderr, "catsrv:", strings.TrimSuffix(err.Error(), ": "+errUsage.Error()))
		}
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "catsrv:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand. It never calls os.Exit, so tests can drive it.
// A command's --help prints its usage on stdout and succeeds.
func run(ctx context.Context, args []string, env environ, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, env, stdin, stdout, stderr)
	var help *helpRequest
	if errors.As(err, &help) {
		_, err = io.WriteString(stdout, help.usage)
	}
	return err
}

func dispatch(ctx context.Context, args []string, env environ, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "serve":
		return serveCmd(ctx, args[1:], env, stderr)
	case "import":
		return importCmd(ctx, args[1:], env, stdin, stderr)
	case "demo":
		return demoCmd(args[1:], stdout)
	case "token":
		return tokenCmd(ctx, args[1:], env, stdout)
	case "openapi":
		return openapiCmd(args[1:], stdout)
	case "audit":
		return auditCmd(ctx, args[1:], env, stdout)
	case "erase":
		return eraseCmd(ctx, args[1:], env, stdout)
	case "eval":
		return evalCmd(ctx, args[1:], env, stdout)
	case "healthcheck":
		return healthcheckCmd(ctx, args[1:], env, stdout)
	case "version", "--version":
		return versionCmd(args[1:], stdout)
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q: %w", args[0], errUsage)
}

// versionCmd prints the build's version, commit and Go version.
func versionCmd(args []string, stdout io.Writer) error {
	fs := newFlags("version")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.misuse("version takes no arguments")
	}
	_, err := fmt.Fprintln(stdout, buildinfo.Get())
	return err
}
