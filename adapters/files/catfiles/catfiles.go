package catfiles

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.CatDirectory = (*Directory)(nil)

// Directory holds the CAT configurations loaded at start. It never touches
// the file system after Load, so a lookup cannot be turned into a path.
// Safe for concurrent use: it is read-only.
type Directory struct {
	byName map[string]catconfig.Cat
	names  []string
}

// maxEchoedName bounds how much of an unknown CAT name an error repeats.
const maxEchoedName = 64

// Cat returns the named CAT's configuration, or an errs.KindNotFound error.
func (d *Directory) Cat(_ context.Context, name string) (catconfig.Cat, error) {
	c, ok := d.byName[name]
	if !ok {
		if len(name) > maxEchoedName {
			name = name[:maxEchoedName] + "..."
		}
		return catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found in configuration", name)
	}
	return clone(c), nil
}

// Cats returns every configured CAT, ordered by name.
func (d *Directory) Cats(context.Context) ([]catconfig.Cat, error) {
	out := make([]catconfig.Cat, 0, len(d.names))
	for _, n := range d.names {
		out = append(out, clone(d.byName[n]))
	}
	return out, nil
}

// clone copies the slices of a configuration so that a caller changing the
// result cannot change what the next caller sees.
func clone(c catconfig.Cat) catconfig.Cat {
	c.Chat.Legacy.Models = slices.Clone(c.Chat.Legacy.Models)
	c.Security.CORS.AllowedOrigins = slices.Clone(c.Security.CORS.AllowedOrigins)
	c.Chat.Custom.Rules = slices.Clone(c.Chat.Custom.Rules)
	c.Chat.Pricing = maps.Clone(c.Chat.Pricing)
	return c
}

// Load reads every <catname>.yaml (or .yml) file of dir, applies the
// overrides and validates each CAT. Any problem fails the whole load,
// naming the file or override and the key: a service must not start with a
// configuration it half understood.
func Load(dir string, overrides []Override) (*Directory, error) {
	files, err := catFiles(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := checkOverrides(overrides, names); err != nil {
		return nil, err
	}
	d := &Directory{byName: make(map[string]catconfig.Cat, len(names)), names: names}
	for _, n := range names {
		c, err := loadCat(n, files[n], forCat(overrides, n))
		if err != nil {
			return nil, err
		}
		d.byName[n] = c
	}
	return d, nil
}

// catFiles maps each CAT name to its file. Files not ending in .yaml or
// .yml and dotfiles (editor and tool leftovers) are not configuration.
func catFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errs.New(errs.KindInvalid, "configuration directory %s does not exist", dir)
	}
	if err != nil {
		return nil, errs.New(errs.KindInvalid, "cannot read configuration directory %s: %v", dir, err)
	}
	files := map[string]string{}
	for _, e := range entries {
		base := e.Name()
		ext := filepath.Ext(base)
		if strings.HasPrefix(base, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		path := filepath.Join(dir, base)
		info, err := os.Stat(path) // follows symlinks, as mounted config maps use them
		if err != nil {
			return nil, errs.New(errs.KindInvalid, "cannot read %s: %v", path, err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		name := strings.TrimSuffix(base, ext)
		if !catconfig.ValidName(name) {
			return nil, errs.New(errs.KindInvalid,
				"%s: the file name must be <catname>.yaml with a CAT name of 1-64 of a-z, 0-9, '-', '_' (starting with a letter or digit)", path)
		}
		if other, dup := files[name]; dup {
			return nil, errs.New(errs.KindInvalid, "CAT %s is configured twice: %s and %s", name, other, path)
		}
		files[name] = path
	}
	return files, nil
}

// loadCat builds one CAT: defaults, then the file, then the overrides in
// order, then validation.
func loadCat(name, path string, overrides []Override) (catconfig.Cat, error) {
	raw := koanf.New(".")
	if err := raw.Load(file.Provider(path), yaml.Parser()); err != nil {
		return catconfig.Cat{}, errs.New(errs.KindInvalid, "%s: not a valid YAML mapping: %v", path, err)
	}
	merged := koanf.New(".")
	prices := map[string]catconfig.Price{}
	price := func(key string, v any) bool {
		model, leaf, ok := catconfig.PricingKey(key)
		if ok {
			p := prices[model]
			p.Set(leaf, v.(float64))
			prices[model] = p
		}
		return ok
	}
	flat := raw.All()
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value, err := checkFileKey(key, flat[key])
		if err != nil {
			return catconfig.Cat{}, errs.New(errs.KindInvalid, "%s: %v", path, err)
		}
		if value == nil || price(key, value) {
			continue
		}
		if err := merged.Set(key, value); err != nil {
			return catconfig.Cat{}, errs.Wrap(errs.KindInternal, err, "merging configuration")
		}
	}
	setBy := map[string]string{}
	for _, o := range overrides {
		if price(o.Key, o.Value) {
			setBy[o.Key] = o.Source
			continue
		}
		if err := merged.Set(o.Key, o.Value); err != nil {
			return catconfig.Cat{}, errs.Wrap(errs.KindInternal, err, "merging configuration")
		}
		setBy[o.Key] = o.Source
	}

	cat := catconfig.Defaults(name)
	conf := koanf.UnmarshalConf{Tag: "config", DecoderConfig: &mapstructure.DecoderConfig{
		TagName:     "config",
		ZeroFields:  true, // a list from the file replaces the default one, sharing nothing with it
		ErrorUnused: true,
	}}
	if err := merged.UnmarshalWithConf("", &cat, conf); err != nil {
		return catconfig.Cat{}, errs.Wrap(errs.KindInternal, err, path+": decoding configuration")
	}
	if len(prices) > 0 {
		cat.Chat.Pricing = prices
	}
	if err := cat.Validate(); err != nil {
		msg := errs.PublicMessage(err, err.Error())
		for key, variable := range setBy {
			if strings.HasPrefix(msg, key+":") {
				return catconfig.Cat{}, errs.New(errs.KindInvalid, "%s: %s (set by %s)", path, msg, variable)
			}
		}
		return catconfig.Cat{}, errs.New(errs.KindInvalid, "%s: %s", path, msg)
	}
	return cat, nil
}

// checkFileKey returns the typed value of one flattened file key, nil for
// an explicitly empty key or section (which keeps the default).
func checkFileKey(key string, v any) (any, error) {
	if looksSecret(key) {
		return nil, errors.New("key " + key + " looks like a secret: secrets come from the environment only, never from configuration files")
	}
	kind, ok := KindOf(key)
	if !ok {
		pricing := key == "cat.pricing" || strings.HasPrefix(key, "cat.pricing.")
		if m, isMap := v.(map[string]any); (sections[key] || pricing) && (v == nil || isMap && len(m) == 0) {
			return nil, nil
		}
		if sections[key] {
			return nil, errors.New("key " + key + " is a section: want a mapping, got " + describe(v))
		}
		return nil, errors.New("unknown key " + key + " (known keys: " + strings.Join(Keys(), ", ") + ")")
	}
	if v == nil {
		return nil, nil
	}
	typed, err := checkFileValue(kind, v)
	if err != nil {
		return nil, errors.New("key " + key + ": " + err.Error())
	}
	return typed, nil
}
