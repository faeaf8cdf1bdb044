package catfiles

import (
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// Override sets one key of the CAT configuration from outside the files.
// catsrv's configuration loader makes them of the CATSRV_CAT__ and
// CATSRV_CATS__ environment variables; this package never reads the
// environment.
type Override struct {
	// Source names what set the override, in errors: e.g. the environment
	// variable CATSRV_CAT__CAT__CHAT_MODE.
	Source string
	// Cat selects the CAT: "" for every CAT, else the CAT whose EnvName it
	// is.
	Cat string
	// Key is a key path of Keys, e.g. "cat.chat_mode".
	Key string
	// Value has the key's kind (KindOf): a string, bool, int, float64 or
	// []string.
	Value any
}

// forCat returns the overrides of one CAT in the order they apply: those
// for every CAT first, so that the CAT's own win, each group in the given
// order.
func forCat(overrides []Override, name string) []Override {
	var all, own []Override
	for _, o := range overrides {
		switch o.Cat {
		case "":
			all = append(all, o)
		case EnvName(name):
			own = append(own, o)
		}
	}
	return append(all, own...)
}

// checkOverrides refuses an override of an unknown key, of a value of
// another kind, or selecting no CAT or more than one of cats: a misspelt
// override silently doing nothing is worse than a refusal to start.
func checkOverrides(overrides []Override, cats []string) error {
	for _, o := range overrides {
		kind, ok := KindOf(o.Key)
		if !ok {
			return errs.New(errs.KindInvalid, "%s names an unknown key %s (known keys: %s)", o.Source, o.Key, strings.Join(Keys(), ", "))
		}
		if !kind.holds(o.Value) {
			return errs.New(errs.KindInvalid, "%s: want %s, got %s", o.Source, kind.Want(), describe(o.Value))
		}
		if o.Cat == "" {
			continue
		}
		var matched []string
		for _, c := range cats {
			if EnvName(c) == o.Cat {
				matched = append(matched, c)
			}
		}
		switch {
		case len(matched) > 1:
			return errs.New(errs.KindInvalid, "%s is ambiguous: it fits the CATs %s", o.Source, strings.Join(matched, " and "))
		case len(matched) == 0:
			return errs.New(errs.KindInvalid, "%s names no configured CAT (configured: %s)", o.Source, strings.Join(cats, ", "))
		}
	}
	return nil
}

// holds reports whether v is a value of the kind.
func (k Kind) holds(v any) bool {
	switch v.(type) {
	case string:
		return k == KindString
	case bool:
		return k == KindBool
	case int:
		return k == KindInt
	case float64:
		return k == KindFloat
	case []string:
		return k == KindStringList
	}
	return false
}

// EnvName is how a CAT name is spelt in Override.Cat (and in environment
// variables): upper-cased, with '-' as '_'.
func EnvName(cat string) string {
	return strings.ToUpper(strings.ReplaceAll(cat, "-", "_"))
}
