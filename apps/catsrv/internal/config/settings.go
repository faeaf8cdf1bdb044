package config

import "reflect"

// setting is one field of Config with an `env` tag.
type setting struct {
	env, flag, def, usage string
	index                 []int // the field's index path in Config
}

// ptr returns the address of the setting's field in c.
func (s setting) ptr(c *Config) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(s.index).Addr().Interface()
}

// settings lists every field of Config (and of its nested structs) that
// has an `env` tag, in declaration order.
func settings() []setting {
	var out []setting
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			path := append(append([]int(nil), index...), i)
			name := f.Tag.Get("env")
			switch {
			case name != "":
				out = append(out, setting{env: name, flag: f.Tag.Get("flag"), def: f.Tag.Get("default"), usage: f.Tag.Get("usage"), index: path})
			case f.Type.Kind() == reflect.Struct && f.IsExported():
				walk(f.Type, path)
			}
		}
	}
	walk(reflect.TypeFor[Config](), nil)
	return out
}
