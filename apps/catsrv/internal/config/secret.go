package config

import "log/slog"

// Secret is a credential from the environment. It prints as "[redacted]"
// (fmt's %v, %+v, %#v and %s, slog, encoding/json), so a configuration
// printed or logged whole shows none; Value returns it.
type Secret struct{ value string }

const redacted = "[redacted]"

// Value returns the secret itself.
func (s Secret) Value() string { return s.value }

// String hides the value.
func (s Secret) String() string {
	if s.value == "" {
		return ""
	}
	return redacted
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText hides the value from encoding/json and other encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
