package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// commandFlags is the flag set of one subcommand, which knows its usage.
type commandFlags struct {
	*flag.FlagSet
}

// newFlags returns the flag set of the named command. It reports errors
// instead of printing or exiting: parse turns them into a helpRequest or a
// usageError.
func newFlags(name string) commandFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return commandFlags{fs}
}

// usage is the command's usage line followed by its flags.
func (fs commandFlags) usage() string {
	var b bytes.Buffer
	synopsis := ""
	for _, c := range commands {
		if c.name == fs.Name() {
			synopsis = c.synopsis
		}
	}
	fmt.Fprintf(&b, "Usage: %s\n", strings.TrimSpace("catsrv "+fs.Name()+" "+synopsis))
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		b.WriteString("\nFlags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return b.String()
}

// parse parses args: -h or --help becomes a helpRequest, a bad flag a
// usageError.
func (fs commandFlags) parse(args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{usage: fs.usage()}
	case err != nil:
		return fs.misuse("%s: %v", fs.Name(), err)
	}
	return nil
}

// misuse is a usageError of the command with the message.
func (fs commandFlags) misuse(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), usage: fs.usage()}
}

// helpRequest is the -h or --help of a command: run prints the usage on
// stdout and succeeds.
type helpRequest struct{ usage string }

func (*helpRequest) Error() string { return "help requested" }

// usageError is a command-line mistake in a command: main prints the
// message and the command's usage on stderr and exits with status 2.
type usageError struct{ msg, usage string }

func (e *usageError) Error() string { return e.msg }

// Unwrap makes a usageError an errUsage.
func (e *usageError) Unwrap() error { return errUsage }
