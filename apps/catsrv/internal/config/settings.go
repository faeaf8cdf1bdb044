package config

import (
	"reflect"
	"strings"
)

// setting is one field of Config with an `env` tag.
type setting struct {
	env, flag, def, usage string
	index                 []int // the field's index path in Config
	// list is set for a list: its text is split on sep (`sep`, blank for
	// any space), else on commas, without blanks.
	list bool
	sep  string
	// template marks the settings of an element of a list (a generic
	// provider's CATSRV_PROVIDER_<NAME>_*): documented, read per element.
	template bool
}

// value is what the setting's text stands for: itself, or for a list
// its items.
func (s setting) value(text string) any {
	switch {
	case !s.list:
		return text
	case s.sep == " ":
		return strings.Fields(text)
	}
	var out []string
	for item := range strings.SplitSeq(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// settings lists every field of Config (and of its nested structs, and of
// the elements of its lists of structs, as templates) that has an `env`
// tag, in declaration order.
func settings() []setting {
	var out []setting
	var walk func(t reflect.Type, index []int, template bool)
	walk = func(t reflect.Type, index []int, template bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			path := append(append([]int(nil), index...), i)
			name := f.Tag.Get("env")
			switch {
			case name != "" && !strings.HasPrefix(name, ","): // not ",squash"
				out = append(out, setting{env: name, flag: f.Tag.Get("flag"), def: f.Tag.Get("default"), usage: f.Tag.Get("usage"),
					index: path, template: template, list: f.Type.Kind() == reflect.Slice, sep: f.Tag.Get("sep")})
			case f.Type.Kind() == reflect.Struct && f.IsExported():
				walk(f.Type, path, template)
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && f.IsExported():
				walk(f.Type.Elem(), nil, true)
			}
		}
	}
	walk(reflect.TypeFor[Config](), nil, false)
	return out
}
