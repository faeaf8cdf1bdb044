package config

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"
)

// Prefixes of the variable families.
const (
	catPrefix      = "CATSRV_CAT__"
	catsPrefix     = "CATSRV_CATS__"
	agentKeyPrefix = "CATSRV_AGENT_API_KEY__"
	embedKeyPrefix = "CATSRV_EMBEDDINGS_API_KEY__"
	providerPrefix = "CATSRV_PROVIDER_"
)

// AddFlags registers on fs the flags of the settings named (by flag name:
// "config", "db", "addr"), with the settings' defaults. Load reads the
// ones given on the command line.
func AddFlags(fs *flag.FlagSet, names ...string) {
	for _, s := range settings() {
		if s.flag != "" && slices.Contains(names, s.flag) {
			fs.String(s.flag, s.def, s.usage+" (env "+s.env+")")
		}
	}
}

// Load builds the configuration of a process from its environment
// (os.Environ form) and the flags of fs that were set (fs may be nil), over
// the defaults, and validates it. Errors name the variable (or flag) and
// what it must be.
func Load(environ []string, fs *flag.FlagSet) (*Config, error) {
	k, err := load(environ, fs)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := k.UnmarshalWithConf("", c, unmarshalConf(c)); err != nil {
		return nil, decodeError(err)
	}
	if err := c.readFamilies(k); err != nil {
		return nil, err
	}
	if err := c.readJWTSecretFile(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.complete()
	c.environ = &environment{vars: slices.Clone(environ)}
	return c, nil
}

// load reads the defaults, then the environment, then the flags set into
// one koanf instance keyed by the variables' names. A list setting's value
// is split there (on its `sep`, else on commas), so that it decodes as a
// list.
func load(environ []string, fs *flag.FlagSet) (*koanf.Koanf, error) {
	byEnv := map[string]setting{}
	defaults := map[string]any{}
	for _, s := range settings() {
		if s.template {
			continue
		}
		byEnv[s.env] = s
		if s.def != "" && !strings.Contains(s.def, "<") {
			defaults[s.env] = s.value(s.def)
		}
	}
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults, ""), nil); err != nil {
		return nil, err
	}
	err := k.Load(env.Provider("", env.Opt{
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, value string) (string, any) {
			switch {
			case strings.HasPrefix(name, catPrefix), strings.HasPrefix(name, catsPrefix), strings.HasPrefix(name, agentKeyPrefix),
				strings.HasPrefix(name, embedKeyPrefix):
				return name, value // an empty value means something here
			case value == "":
				return "", nil // unset
			}
			if s, known := byEnv[name]; known {
				return name, s.value(value)
			}
			if strings.HasPrefix(name, providerPrefix) {
				return name, value // a generic provider's, read per name
			}
			return "", nil
		},
	}), nil)
	if err != nil {
		return nil, err
	}
	if fs != nil {
		set := map[string]any{}
		fs.Visit(func(f *flag.Flag) {
			for _, s := range byEnv {
				if s.flag == f.Name {
					set[s.env] = f.Value.String()
				}
			}
		})
		if err := k.Load(confmap.Provider(set, ""), nil); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// unmarshalConf decodes into the fields by their `env` tags, the text of
// a setting typed by parseText.
func unmarshalConf(result any) koanf.UnmarshalConf {
	return koanf.UnmarshalConf{Tag: "env", DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.DecodeHookFuncType(parseText),
		Result:     result,
	}}
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	secretType   = reflect.TypeFor[Secret]()
)

// parseText types the text of a setting for its field. A duration is Go's
// form, or whole days (90d), or off (0); a rate is a number or off (0).
func parseText(from, to reflect.Type, data any) (any, error) {
	text, ok := data.(string)
	if !ok || from.Kind() != reflect.String {
		return data, nil
	}
	switch {
	case to == secretType:
		return Secret{text}, nil
	case to == durationType:
		return parseDuration(strings.TrimSpace(text))
	case to.Kind() == reflect.Int, to.Kind() == reflect.Int64:
		return strconv.ParseInt(text, 10, 64)
	case to.Kind() == reflect.Float64:
		if text = strings.TrimSpace(text); text == "off" {
			return 0.0, nil
		}
		return strconv.ParseFloat(text, 64)
	case to.Kind() == reflect.Bool:
		return strconv.ParseBool(text)
	}
	return data, nil
}

// parseDuration reads a Go duration, whole days (90d, up to 100 years) or
// off (0).
func parseDuration(v string) (time.Duration, error) {
	switch {
	case v == "off":
		return 0, nil
	case strings.HasSuffix(v, "d"):
		days, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err != nil || days < 1 || days > 100*365 {
			return 0, fmt.Errorf("%q is not a whole number of days", v)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}

// decodeError turns a decoding error into the setting's: its variable and
// what it must be.
func decodeError(err error) error {
	var de *mapstructure.DecodeError
	if !errors.As(err, &de) {
		return err
	}
	if must, ok := musts[de.Name()]; ok {
		return fmt.Errorf("%s %s", de.Name(), must)
	}
	return fmt.Errorf("%s: %w", de.Name(), de.Unwrap())
}

// readFamilies reads the variables whose names carry a CAT, a key or a
// provider name: CATSRV_AGENT_API_KEY__<CAT>, CATSRV_EMBEDDINGS_API_KEY__<CAT>, the CAT overrides and the
// generic providers' CATSRV_PROVIDER_<NAME>_*.
func (c *Config) readFamilies(k *koanf.Koanf) error {
	c.AgentAPIKeysByCat = map[string]Secret{}
	c.EmbeddingsAPIKeysByCat = map[string]Secret{}
	for _, name := range k.Keys() {
		if cat, ok := strings.CutPrefix(name, agentKeyPrefix); ok {
			c.AgentAPIKeysByCat[cat] = Secret{k.String(name)}
		}
		if cat, ok := strings.CutPrefix(name, embedKeyPrefix); ok {
			c.EmbeddingsAPIKeysByCat[cat] = Secret{k.String(name)}
		}
	}
	for _, prefix := range []string{catPrefix, catsPrefix} {
		for _, variable := range sortedKeys(k, prefix) {
			o, err := parseOverride(variable, k.String(variable))
			if err != nil {
				return err
			}
			c.CatOverrides = append(c.CatOverrides, o)
		}
	}
	var templates []setting
	for _, s := range settings() {
		if s.template {
			templates = append(templates, s)
		}
	}
	for _, name := range c.OIDCProviders {
		// The provider's variables under their templates' names, so that
		// they decode by the templates' tags.
		vars := map[string]any{}
		for _, s := range templates {
			if v := k.String(oidcEnv(s.env, name)); v != "" {
				vars[s.env] = s.value(v)
			} else if s.def != "" && !strings.Contains(s.def, "<") {
				vars[s.env] = s.value(s.def)
			}
		}
		p := OIDCProvider{Name: name}
		one := koanf.New(".")
		if err := one.Load(confmap.Provider(vars, ""), nil); err != nil {
			return err
		}
		if err := one.UnmarshalWithConf("", &p, unmarshalConf(&p)); err != nil {
			return decodeError(err)
		}
		c.OIDC = append(c.OIDC, p)
	}
	return nil
}

// oidcEnv names a generic provider's variable: the template with <NAME>
// the provider's name in upper case.
func oidcEnv(template, name string) string {
	return strings.Replace(template, "<NAME>", strings.ToUpper(name), 1)
}

// sortedKeys returns the keys of k with the prefix, sorted.
func sortedKeys(k *koanf.Koanf, prefix string) []string {
	var out []string
	for _, name := range k.Keys() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
