package main

import (
	"io"
	"strings"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/demo"
)

func demoCmd(args []string, stdout io.Writer) error {
	fs := newFlags("demo")
	n := fs.Int("interactions", 10000, "number of lines to write")
	cats := fs.String("cats", "demo", "comma-separated CAT names")
	days := fs.Int("days", 90, "days of history, ending at the start of today (UTC)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed writes the same lines (for the same day)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *n < 0 || *days < 1 {
		return fs.misuse("--interactions must be >= 0 and --days >= 1")
	}
	var names []string
	for _, c := range strings.Split(*cats, ",") {
		if c = strings.TrimSpace(c); c != "" {
			names = append(names, c)
		}
	}
	if len(names) == 0 {
		return fs.misuse("--cats needs at least one name")
	}
	// The log ends at the start of today (UTC): no demo interaction lies in
	// the future of the chats that follow it, and a seed writes the same
	// lines all day.
	end := time.Now().UTC().Truncate(24 * time.Hour)
	return demo.Generate(stdout, demo.Options{Interactions: *n, Cats: names, Days: *days, Seed: *seed, End: end})
}
