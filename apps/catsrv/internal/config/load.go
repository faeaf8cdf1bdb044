package config

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
)

// Bounds of settings.
const (
	minMemoryBytes = 1024
	maxMemoryBytes = 16 << 20
	maxAuthBurst   = 100000
	minIngestBytes = 1024
	maxIngestBytes = 1 << 30
	maxIngestLines = 1000000
	maxWholeLists  = 64
	maxRate        = 1e6
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
	all := settings()
	byEnv := map[string]setting{}
	defaults := map[string]any{}
	for _, s := range all {
		if s.template {
			continue
		}
		byEnv[s.env] = s
		if s.def != "" && !strings.Contains(s.def, "<") {
			defaults[s.env] = s.def
		}
	}
	// Keys are the variables' own names, flat: the delimiter is a byte no
	// name holds.
	k := koanf.New("\x00")
	if err := k.Load(confmap.Provider(defaults, ""), nil); err != nil {
		return nil, err
	}
	err := k.Load(env.Provider("", env.Opt{
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, value string) (string, any) {
			switch {
			case strings.HasPrefix(name, catPrefix), strings.HasPrefix(name, catsPrefix), strings.HasPrefix(name, agentKeyPrefix), strings.HasPrefix(name, embedKeyPrefix):
				return name, value // an empty value means something here
			case value == "":
				return "", nil // unset
			case strings.HasPrefix(name, providerPrefix):
				return name, value // a generic provider's, read per name
			}
			if _, known := byEnv[name]; known {
				return name, value
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
			for _, s := range all {
				if s.flag == f.Name {
					set[s.env] = f.Value.String()
				}
			}
		})
		if err := k.Load(confmap.Provider(set, ""), nil); err != nil {
			return nil, err
		}
	}
	return decode(k, all)
}

// decode fills a Config from k and validates it.
func decode(k *koanf.Koanf, all []setting) (*Config, error) {
	c := &Config{}
	d := &decoder{k: k, fields: map[any]setting{}}
	for _, s := range all {
		if !s.template {
			d.fields[s.ptr(c)] = s
		}
	}
	d.str(&c.ConfigDir)
	d.str(&c.DB)
	d.str(&c.Addr)
	d.parse(&c.MetricsAddr, "must be a listen address HOST:PORT (e.g. 127.0.0.1:9090)", func(v string) (bool, error) {
		c.MetricsAddr = v
		_, port, err := net.SplitHostPort(v)
		return err == nil && port != "", nil
	})
	d.parse(&c.OTLPEndpoint, "must be the http or https base URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318)", func(v string) (bool, error) {
		c.OTLPEndpoint = v
		u, err := url.Parse(v)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil, nil
	})
	d.secret(&c.JWTSecret)
	d.str(&c.JWTIssuer)
	d.str(&c.JWTAudience)
	d.publicURL(c)
	d.providers(c)
	d.oidc(c)
	d.admins(c)
	d.str(&c.AuthDefaultCat)
	d.parse(&c.CookieSameSite, "must be lax or strict", func(v string) (bool, error) {
		c.CookieSameSite = strings.ToLower(v)
		return c.CookieSameSite == "lax" || c.CookieSameSite == "strict", nil
	})
	d.str(&c.CookieDomain)
	d.parse(&c.CookieInsecure, "must be true or false", func(v string) (ok bool, err error) {
		c.CookieInsecure, err = strconv.ParseBool(v)
		return err == nil, nil
	})
	d.cookieInsecure(c)
	d.origins(&c.CORSAllowedOrigins)
	d.str(&c.PostLoginURL)
	d.parse(&c.RefreshTTL, "must be a duration of at least 1h, e.g. 720h", func(v string) (ok bool, err error) {
		c.RefreshTTL, err = time.ParseDuration(v)
		return err == nil && c.RefreshTTL >= time.Hour, nil
	})
	d.parse(&c.MemoryMaxBytes, fmt.Sprintf("must be a number of bytes between %d and %d", minMemoryBytes, maxMemoryBytes), func(v string) (ok bool, err error) {
		c.MemoryMaxBytes, err = strconv.Atoi(v)
		return err == nil && c.MemoryMaxBytes >= minMemoryBytes && c.MemoryMaxBytes <= maxMemoryBytes, nil
	})
	d.parse(&c.IngestMaxBytes, fmt.Sprintf("must be a number of bytes between %d and %d", minIngestBytes, maxIngestBytes), func(v string) (ok bool, err error) {
		c.IngestMaxBytes, err = strconv.ParseInt(v, 10, 64)
		return err == nil && c.IngestMaxBytes >= minIngestBytes && c.IngestMaxBytes <= maxIngestBytes, nil
	})
	d.parse(&c.IngestMaxLines, fmt.Sprintf("must be a number of interactions between 1 and %d", maxIngestLines), func(v string) (ok bool, err error) {
		c.IngestMaxLines, err = strconv.Atoi(v)
		return err == nil && c.IngestMaxLines >= 1 && c.IngestMaxLines <= maxIngestLines, nil
	})
	d.parse(&c.RawWholeLists, fmt.Sprintf("must be a number of requests between 1 and %d", maxWholeLists), func(v string) (ok bool, err error) {
		c.RawWholeLists, err = strconv.Atoi(v)
		return err == nil && c.RawWholeLists >= 1 && c.RawWholeLists <= maxWholeLists, nil
	})
	d.parse(&c.AuthRateLimit, "must be a number of requests per second per client address (e.g. 1 or 0.5), or off", func(v string) (bool, error) {
		v = strings.TrimSpace(v)
		if v == "0" || v == "off" {
			c.AuthRateLimit = 0
			return true, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		c.AuthRateLimit = f
		return err == nil && f > 0 && f <= maxRate, nil
	})
	d.parse(&c.AuthRateBurst, fmt.Sprintf("must be a whole number of requests between 1 and %d", maxAuthBurst), func(v string) (ok bool, err error) {
		c.AuthRateBurst, err = strconv.Atoi(v)
		return err == nil && c.AuthRateBurst >= 1 && c.AuthRateBurst <= maxAuthBurst, nil
	})
	d.parse(&c.AuditRetention, "must be whole days (90d) or a duration of at least 1h (2160h), or off", func(v string) (bool, error) {
		var ok bool
		c.AuditRetention, ok = parseRetention(strings.TrimSpace(v))
		return ok, nil
	})
	d.parse(&c.CatConfigPoll, "must be a duration between 50ms and 1m, e.g. 500ms", func(v string) (ok bool, err error) {
		c.CatConfigPoll, err = time.ParseDuration(strings.TrimSpace(v))
		return err == nil && c.CatConfigPoll >= 50*time.Millisecond && c.CatConfigPoll <= time.Minute, nil
	})
	d.parse(&c.IndexPoll, "must be a duration between 50ms and 1m, e.g. 250ms", func(v string) (ok bool, err error) {
		c.IndexPoll, err = time.ParseDuration(strings.TrimSpace(v))
		return err == nil && c.IndexPoll >= 50*time.Millisecond && c.IndexPoll <= time.Minute, nil
	})
	d.parse(&c.RetentionInterval, "must be a duration of at least 1m (e.g. 1h), or off", func(v string) (ok bool, err error) {
		if v = strings.TrimSpace(v); v == "off" || v == "0" {
			c.RetentionInterval = 0
			return true, nil
		}
		c.RetentionInterval, err = time.ParseDuration(v)
		return err == nil && c.RetentionInterval >= time.Minute, nil
	})
	d.parse(&c.Warehouse, "must be index or sql", func(v string) (bool, error) {
		c.Warehouse = v
		if v != "index" && v != "sql" {
			return false, fmt.Errorf("%s must be index or sql, not %q", d.fields[&c.Warehouse].env, v)
		}
		return true, nil
	})
	d.agentKeys(c)
	d.catOverrides(c)
	d.str(&c.GOGC)
	d.str(&c.GOMEMLIMIT)
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// parseRetention reads CATSRV_AUDIT_RETENTION: whole days (90d) or a Go
// duration of at least an hour; 0 or off is forever (0).
func parseRetention(v string) (time.Duration, bool) {
	switch {
	case v == "0" || v == "off":
		return 0, true
	case strings.HasSuffix(v, "d"):
		days, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err != nil || days < 1 || days > 100*365 {
			return 0, false
		}
		return time.Duration(days) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil && d >= time.Hour
}

// decoder reads settings from k, keeping the first error.
type decoder struct {
	k      *koanf.Koanf
	fields map[any]setting // by the address of the Config field
	err    error
}

func (d *decoder) text(ptr any) string {
	s, ok := d.fields[ptr]
	if !ok {
		panic("config: a decoded field has no env tag")
	}
	return d.k.String(s.env)
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) str(p *string)    { *p = d.text(p) }
func (d *decoder) secret(p *Secret) { p.value = d.text(p) }

// parse reads one setting with read, which reports whether the text is
// acceptable or an error of its own; a setting left unset and without a
// default is not read.
func (d *decoder) parse(ptr any, must string, read func(string) (bool, error)) {
	s := d.fields[ptr]
	if !d.k.Exists(s.env) {
		return
	}
	ok, err := read(d.k.String(s.env))
	switch {
	case err != nil:
		d.fail(err)
	case !ok:
		d.fail(fmt.Errorf("%s %s", s.env, must))
	}
}

// list reads a comma-separated setting, without blanks.
func (d *decoder) list(p *[]string) []string {
	var out []string
	for item := range strings.SplitSeq(d.text(p), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// publicURL sets PublicURL (CATSRV_PUBLIC_URL, else http://<addr>) and
// PublicOrigin (its origin when set: the only origin the CSRF check takes
// for the server's own).
func (d *decoder) publicURL(c *Config) {
	raw := d.text(&c.PublicURL)
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			d.fail(fmt.Errorf("CATSRV_PUBLIC_URL %q is not an http or https URL", raw))
			return
		}
		c.PublicOrigin = u.Scheme + "://" + u.Host
	} else {
		raw = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimSuffix(raw, "/")
	if _, err := url.ParseRequestURI(c.PublicURL); err != nil {
		d.fail(fmt.Errorf("CATSRV_PUBLIC_URL %q is not a URL", c.PublicURL))
	}
}

// cookieInsecure refuses CATSRV_COOKIE_INSECURE=true unless the public URL
// is plain http on a loopback host.
func (d *decoder) cookieInsecure(c *Config) {
	if !c.CookieInsecure || d.err != nil {
		return
	}
	u, _ := url.Parse(c.PublicURL)
	host := u.Hostname()
	if u.Scheme != "http" || (host != "localhost" && host != "127.0.0.1" && host != "::1") {
		d.fail(fmt.Errorf("CATSRV_COOKIE_INSECURE=true is only for plain-http development on localhost (CATSRV_PUBLIC_URL is %s)", c.PublicURL))
	}
}

// admins reads CATSRV_ADMINS: comma-separated "<provider>:<subject>",
// the provider one of the three or a generic one of CATSRV_OIDC_PROVIDERS.
func (d *decoder) admins(c *Config) {
	known := append(slices.Clone(auth.Providers), c.OIDCProviders...)
	for _, entry := range d.list(&c.Admins) {
		provider, subject, ok := strings.Cut(entry, ":")
		if !ok || subject == "" || !slices.Contains(known, provider) {
			d.fail(fmt.Errorf("CATSRV_ADMINS: %q is not <provider>:<subject> with a provider of %v", entry, known))
			return
		}
		c.Admins = append(c.Admins, entry)
	}
}

// origins reads CATSRV_CORS_ALLOWED_ORIGINS: comma-separated origins.
func (d *decoder) origins(p *[]string) {
	for _, o := range d.list(p) {
		if !catconfig.ValidOrigin(o) {
			d.fail(fmt.Errorf("CATSRV_CORS_ALLOWED_ORIGINS: %q is not an origin: want scheme://host[:port], no wildcard", o))
			return
		}
		*p = append(*p, o)
	}
}

// providers reads the providers' variables. A provider with none of its
// required variables set is left unconfigured; one with only some is an
// error.
func (d *decoder) providers(c *Config) {
	byName := map[string]any{auth.ProviderA: &c.ProviderA, auth.ProviderB: &c.ProviderB, auth.ProviderC: &c.ProviderC}
	for _, name := range auth.Providers {
		v := reflect.ValueOf(byName[name]).Elem()
		var required, missing []string
		for i := range v.NumField() {
			f := v.Field(i)
			text := d.text(f.Addr().Interface())
			switch {
			case f.Type() == reflect.TypeFor[Secret]():
				f.Set(reflect.ValueOf(Secret{text}))
			case f.Kind() == reflect.Slice:
				f.Set(reflect.ValueOf(strings.Fields(text)))
			default:
				f.SetString(text)
			}
			if v.Type().Field(i).Tag.Get("required") == "true" {
				required = append(required, v.Type().Field(i).Tag.Get("env"))
				if text == "" {
					missing = append(missing, v.Type().Field(i).Tag.Get("env"))
				}
			}
		}
		if len(missing) > 0 && len(missing) < len(required) {
			d.fail(fmt.Errorf("%s is half configured: set %s too (or unset its other variables)", name, strings.Join(missing, ", ")))
		}
	}
}

// agentKeys reads CATSRV_AGENT_API_KEY and CATSRV_AGENT_API_KEY__<CAT>,
// and the same of CATSRV_EMBEDDINGS_API_KEY.
func (d *decoder) agentKeys(c *Config) {
	d.secret(&c.AgentAPIKey)
	c.AgentAPIKeysByCat = map[string]Secret{}
	for _, name := range d.k.Keys() {
		if cat, ok := strings.CutPrefix(name, agentKeyPrefix); ok {
			c.AgentAPIKeysByCat[cat] = Secret{d.k.String(name)}
		}
	}
	d.secret(&c.EmbeddingsAPIKey)
	c.EmbeddingsAPIKeysByCat = map[string]Secret{}
	for _, name := range d.k.Keys() {
		if cat, ok := strings.CutPrefix(name, embedKeyPrefix); ok {
			c.EmbeddingsAPIKeysByCat[cat] = Secret{d.k.String(name)}
		}
	}
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
