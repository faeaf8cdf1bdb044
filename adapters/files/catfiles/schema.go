package catfiles

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/catsrv/catsrv/core/catconfig"
)

// Kind is what a configuration key holds. Files and overrides are checked
// against it before decoding, so a wrong type is reported with the key and
// its source rather than as a decoder error.
type Kind int

// The kinds of keys.
const (
	KindString Kind = iota
	KindBool
	KindInt
	KindStringList
	KindFloat
	// KindMappingList is a list of mappings (cat.agent.mcp_servers): set
	// in files only, never by an environment override.
	KindMappingList
)

// KindOf returns the kind of a key path, and false for an unknown key.
// security.providers.<name>.enabled of a generic provider's name is a
// boolean.
func KindOf(key string) (Kind, bool) {
	if k, ok := schema[key]; ok {
		return k, true
	}
	if _, ok := catconfig.GenericProviderKey(key); ok {
		return KindBool, true
	}
	if _, _, ok := catconfig.PricingKey(key); ok {
		return KindFloat, true
	}
	return 0, false
}

// Want phrases the kind for an error: "want a boolean (true or false)".
func (k Kind) Want() string {
	switch k {
	case KindBool:
		return "a boolean (true or false)"
	case KindInt:
		return "an integer"
	case KindStringList:
		return "a list of strings"
	case KindFloat:
		return "a number"
	case KindMappingList:
		return "a list of mappings (set in the CAT's file only)"
	}
	return "a string"
}

// schema maps every leaf key path ("cat.chat_mode") to its kind. It is
// derived from catconfig.Cat's `config` tags, so a key added to the core is
// accepted here without a second list to keep in step.
var schema = buildSchema(reflect.TypeFor[catconfig.Cat](), "")

// sections holds every key path that is a prefix of a leaf ("cat",
// "security.jwt"): a file may spell them as empty mappings.
var sections = buildSections()

func buildSchema(t reflect.Type, prefix string) map[string]Kind {
	out := map[string]Kind{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("config")
		if tag == "" || tag == "-" || strings.HasPrefix(tag, ",") {
			continue // ",remain": keys of other names (KindOf)
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		switch {
		case f.Type.Kind() == reflect.Map:
			// Keys of other names (cat.pricing.<model>.*, KindOf), read
			// by loadCat: a model name may hold dots.
			continue
		case f.Type.Kind() == reflect.Struct:
			for k, v := range buildSchema(f.Type, path) {
				out[k] = v
			}
		case f.Type.Kind() == reflect.String:
			out[path] = KindString
		case f.Type.Kind() == reflect.Bool:
			out[path] = KindBool
		case f.Type.Kind() == reflect.Int:
			out[path] = KindInt
		case f.Type.Kind() == reflect.Float64:
			out[path] = KindFloat
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			out[path] = KindStringList
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			out[path] = KindMappingList // its items' keys are checked when decoded
		default:
			panic(fmt.Sprintf("catfiles: key %s has unsupported type %s", path, f.Type))
		}
	}
	return out
}

func buildSections() map[string]bool {
	out := map[string]bool{}
	for key := range schema {
		for i := strings.LastIndexByte(key, '.'); i > 0; i = strings.LastIndexByte(key[:i], '.') {
			out[key[:i]] = true
		}
	}
	return out
}

// Keys lists every configuration key, sorted. The documentation and the
// tests use it to stay complete.
func Keys() []string {
	keys := make([]string, 0, len(schema))
	for k := range schema {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// secretWords mark key paths that would hold credentials. Those belong in
// the environment, never in files that get committed and copied around.
// They are matched as whole words of a key's segments (words joined by _
// or -), so that counts of tokens (cat.agent.max_tokens,
// cat.budget.monthly_tokens) are not taken for credentials.
var secretWords = []string{"secret", "secrets", "api_key", "apikey", "password", "passwords", "passwd", "token", "client_secret", "private_key", "credentials"}

func looksSecret(key string) bool {
	for _, seg := range strings.Split(strings.ToLower(key), ".") {
		seg = "_" + strings.ReplaceAll(seg, "-", "_") + "_"
		for _, w := range secretWords {
			if strings.Contains(seg, "_"+w+"_") {
				return true
			}
		}
	}
	return false
}

// checkFileValue accepts a value as YAML decoded it only if it has exactly
// the key's type: a quoted "true" is not a boolean and 24.5 is not an
// integer. Weak typing would hide typos such as `public: "ture"`.
func checkFileValue(kind Kind, v any) (any, error) {
	switch kind {
	case KindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case KindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case KindInt:
		switch n := v.(type) {
		case int:
			return n, nil
		case int64:
			if n >= math.MinInt && n <= math.MaxInt {
				return int(n), nil
			}
		case uint64:
			if n <= math.MaxInt {
				return int(n), nil
			}
		}
	case KindFloat:
		switch n := v.(type) {
		case float64:
			return n, nil
		case int:
			return float64(n), nil
		case int64:
			return float64(n), nil
		case uint64:
			return float64(n), nil
		}
	case KindStringList:
		items, ok := v.([]any)
		if !ok {
			break
		}
		out := make([]string, 0, len(items))
		for _, item := range items {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("want %s, got an item %s", kind.Want(), describe(item))
			}
			out = append(out, s)
		}
		return out, nil
	case KindMappingList:
		items, ok := v.([]any)
		if !ok {
			break
		}
		for _, item := range items {
			if _, ok := item.(map[string]any); !ok {
				return nil, fmt.Errorf("want %s, got an item %s", kind.Want(), describe(item))
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("want %s, got %s", kind.Want(), describe(v))
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("the string %q", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}
