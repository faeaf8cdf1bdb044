package web

import (
	"encoding/json"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// TestAPIDocsMatchThePin: the embedded reference page assets are those of
// the @stoplight/elements version tools/apidocs pins, in its package.json
// and its package-lock.json (make apidocs rebuilds them from it).
func TestAPIDocsMatchThePin(t *testing.T) {
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	for file, v := range map[string]any{"../../../tools/apidocs/package.json": &pkg, "../../../tools/apidocs/package-lock.json": &lock} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	want := pkg.DevDependencies["@stoplight/elements"]
	locked := lock.Packages["node_modules/@stoplight/elements"]
	if want == "" || locked.Version != want || locked.Integrity == "" {
		t.Fatalf("package.json pins %q, package-lock.json locks %q (integrity %q)", want, locked.Version, locked.Integrity)
	}
	var names []string
	entries, err := fs.ReadDir(APIDocs(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"LICENSE.txt", "elements-" + want + ".css.gz", "elements-" + want + ".js.gz"}) {
		t.Errorf("embedded %v, want the licence and the gzip script and stylesheet of Elements %s", names, want)
	}
}
