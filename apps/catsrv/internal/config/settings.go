package config

import "reflect"

// setting is one field of Config with an `env` tag.
type setting struct {
	env, flag, def, usage string
	index                 []int // the field's index path in Config
	// template marks the settings of an element of a list (a generic
	// provider's CATSRV_PROVIDER_<NAME>_*): documented, read per element.
	template bool
}

// ptr returns the address of the setting's field in c.
func (s setting) ptr(c *Config) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(s.index).Addr().Interface()
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
			case name != "":
				out = append(out, setting{env: name, flag: f.Tag.Get("flag"), def: f.Tag.Get("default"), usage: f.Tag.Get("usage"),
					index: path, template: template})
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
