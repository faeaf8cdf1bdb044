package core_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// allowedOutside lists the only non-standard-library modules core may use.
var allowedOutside = []string{
	"github.com/catsrv/catsrv/core",
	"github.com/catsrv/catsrv/ports",
	"github.com/golang-jwt/jwt/v5",
	// Pure function libraries of core/knowledge: the offline BPE
	// tokenizer that counts chunk tokens, and the HTML parser.
	"github.com/tiktoken-go/tokenizer",
	"github.com/dlclark/regexp2/v2", // the tokenizer's pre-tokenizing patterns
	"golang.org/x/net/html",
}

// TestCoreImportsNothingOutward enforces the hexagonal dependency rule on
// the non-test code of every core package, transitively.
func TestCoreImportsNothingOutward(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Standard   bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		checked++
		if p.Standard || allowed(p.ImportPath) {
			continue
		}
		t.Errorf("core depends on %s: core may import only the standard library and %v", p.ImportPath, allowedOutside)
	}
	if checked < 5 {
		t.Fatalf("only %d packages listed: the check is not looking at core", checked)
	}
}

func allowed(path string) bool {
	for _, prefix := range allowedOutside {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

// TestAdaptersImportNoOtherAdapter enforces that adapters meet only
// through ports: the non-test code of a package under adapters/ imports
// no package of another adapter (a package may import its own adapter's
// packages, as sqlstore/authsql imports sqlstore). apps/catsrv wires
// them together.
func TestAdaptersImportNoOtherAdapter(t *testing.T) {
	const prefix = "github.com/catsrv/catsrv/adapters/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../adapters/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	adapter := func(path string) string { // the adapter's directory under adapters/
		name, _, _ := strings.Cut(strings.TrimPrefix(path, prefix), "/")
		return name
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, prefix) && adapter(imp) != adapter(p.ImportPath) {
				t.Errorf("%s imports %s: adapters meet through ports only", p.ImportPath, imp)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d packages listed: the check is not looking at adapters", checked)
	}
}
