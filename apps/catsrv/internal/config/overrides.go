package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/core/errs"
)

// parseOverride turns a CATSRV_CAT__<SECTION>__<KEY> variable (every
// CAT) or a CATSRV_CATS__<NAME>__<SECTION>__<KEY> one (the CAT <NAME>,
// catfiles.EnvName) into a catfiles override, typed for its key. Key path
// segments are separated by "__" and matched lower-cased. Every variable
// must name a known key: a misspelt override silently doing nothing is
// worse than a refusal to start. Whether <NAME> is a configured CAT,
// catfiles.Load checks.
func parseOverride(variable, text string) (catfiles.Override, error) {
	o := catfiles.Override{Source: variable}
	if rest, ok := strings.CutPrefix(variable, catsPrefix); ok {
		o.Cat, o.Key = perCat(rest)
	} else {
		o.Key = envKey(strings.TrimPrefix(variable, catPrefix))
	}
	kind, ok := catfiles.KindOf(o.Key)
	if !ok {
		return o, errs.New(errs.KindInvalid,
			"environment variable %s names an unknown key %s (known keys: %s)", variable, o.Key, strings.Join(catfiles.Keys(), ", "))
	}
	value, err := parseValue(kind, text)
	if err != nil {
		return o, errs.New(errs.KindInvalid, "environment variable %s: %v", variable, err)
	}
	o.Value = value
	return o, nil
}

// perCat splits the rest of a CATSRV_CATS__ variable into the CAT's name
// and the key. A CAT name may itself contain "__" once upper-cased, so
// every "__" is tried as the end of the name: the one leaving a known key
// wins (no known key is the tail of another, so at most one does). With
// none, the key is what follows the first "__".
func perCat(rest string) (cat, key string) {
	first := ""
	for i := 0; ; {
		j := strings.Index(rest[i:], "__")
		if j < 0 {
			break
		}
		name, tail := rest[:i+j], envKey(rest[i+j+2:])
		if first == "" {
			first = tail
		}
		if _, known := catfiles.KindOf(tail); known && name != "" {
			return name, tail
		}
		i += j + 1
	}
	return "", first
}

// envKey turns "SECURITY__JWT__EXPIRATION_HOURS" into the key path
// "security.jwt.expiration_hours".
func envKey(rest string) string {
	return strings.ToLower(strings.ReplaceAll(rest, "__", "."))
}

// parseValue types a variable's text for its key. Lists are
// comma-separated; an empty value is an empty list.
func parseValue(kind catfiles.Kind, text string) (any, error) {
	switch kind {
	case catfiles.KindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("want %s, got %q", kind.Want(), text)
		}
		return b, nil
	case catfiles.KindInt:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("want %s, got %q", kind.Want(), text)
		}
		return n, nil
	case catfiles.KindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("want %s, got %q", kind.Want(), text)
		}
		return f, nil
	case catfiles.KindStringList:
		out := []string{}
		for item := range strings.SplitSeq(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		return out, nil
	}
	return text, nil
}
