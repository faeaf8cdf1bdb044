package catfiles

import (
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// The prefixes of override variables: one for every CAT, one naming a CAT.
const (
	GlobalPrefix = "CATSRV_CAT__"
	PerCatPrefix = "CATSRV_CATS__"
)

// override is one environment variable's setting of one key.
type override struct {
	variable string
	key      string
	value    any
}

// overrides holds the parsed variables, each list in application order.
type overrides struct {
	global []override
	perCat map[string][]override
}

// forCat returns the overrides of one CAT, global ones first so that the
// CAT's own win.
func (o overrides) forCat(name string) []override {
	return append(slices.Clone(o.global), o.perCat[name]...)
}

// parseOverrides reads the override variables of environ. Every one of them
// must name a known key (and, per CAT, a loaded CAT): a misspelt override
// silently doing nothing is worse than a refusal to start.
func parseOverrides(environ []string, cats []string) (overrides, error) {
	vars := slices.Clone(environ)
	slices.Sort(vars) // a fixed order whatever the process environment's
	ov := overrides{perCat: map[string][]override{}}
	for _, entry := range vars {
		variable, text, ok := strings.Cut(entry, "=")
		if !ok {
			continue
		}
		if rest, ok := strings.CutPrefix(variable, PerCatPrefix); ok {
			cat, o, err := parsePerCat(variable, rest, text, cats)
			if err != nil {
				return overrides{}, err
			}
			ov.perCat[cat] = append(ov.perCat[cat], o)
			continue
		}
		if rest, ok := strings.CutPrefix(variable, GlobalPrefix); ok {
			o, err := parseOverride(variable, envKey(rest), text)
			if err != nil {
				return overrides{}, err
			}
			ov.global = append(ov.global, o)
		}
	}
	return ov, nil
}

// parsePerCat finds the CAT a CATSRV_CATS__ variable names. Because a CAT
// name may itself contain "__" once upper-cased, every CAT whose spelling
// prefixes the rest is tried, and exactly one must leave a known key.
func parsePerCat(variable, rest, text string, cats []string) (string, override, error) {
	var matched []string
	var key, firstTried string
	for _, c := range cats {
		tail, ok := strings.CutPrefix(rest, EnvName(c)+"__")
		if !ok {
			continue
		}
		if firstTried == "" {
			firstTried = envKey(tail)
		}
		if _, known := schema[envKey(tail)]; known {
			matched = append(matched, c)
			key = envKey(tail)
		}
	}
	switch {
	case len(matched) > 1:
		return "", override{}, errs.New(errs.KindInvalid,
			"environment variable %s is ambiguous: it fits the CATs %s", variable, strings.Join(matched, " and "))
	case len(matched) == 1:
		o, err := parseOverride(variable, key, text)
		return matched[0], o, err
	case firstTried != "":
		return "", override{}, errs.New(errs.KindInvalid,
			"environment variable %s names an unknown key %s (known keys: %s)", variable, firstTried, strings.Join(Keys(), ", "))
	}
	return "", override{}, errs.New(errs.KindInvalid,
		"environment variable %s names no configured CAT (configured: %s)", variable, strings.Join(cats, ", "))
}

func parseOverride(variable, key, text string) (override, error) {
	kind, ok := schema[key]
	if !ok {
		return override{}, errs.New(errs.KindInvalid,
			"environment variable %s names an unknown key %s (known keys: %s)", variable, key, strings.Join(Keys(), ", "))
	}
	value, err := parseEnvValue(kind, text)
	if err != nil {
		return override{}, errs.New(errs.KindInvalid, "environment variable %s: %v", variable, err)
	}
	return override{variable: variable, key: key, value: value}, nil
}

// envKey turns "SECURITY__JWT__EXPIRATION_HOURS" into the key path
// "security.jwt.expiration_hours".
func envKey(rest string) string {
	return strings.ToLower(strings.ReplaceAll(rest, "__", "."))
}

// EnvName is how a CAT name is spelt in a CATSRV_CATS__ variable:
// upper-cased, with '-' as '_'.
func EnvName(cat string) string {
	return strings.ToUpper(strings.ReplaceAll(cat, "-", "_"))
}
