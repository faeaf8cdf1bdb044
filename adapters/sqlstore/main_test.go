package sqlstore_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs the parallel tests four at a time unless -parallel is
// given: they spend much of their time waiting on the databases, so go
// test's default (GOMAXPROCS) leaves a small machine's cores idle.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", "4"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
