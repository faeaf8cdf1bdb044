package sqlstore

import (
	"strconv"
	"strings"
	"time"
)

// dialect is what the SQL differs in between the two databases this
// package supports. Everything else is shared.
type dialect int

const (
	sqliteDialect dialect = iota
	postgresDialect
)

func (d dialect) String() string {
	if d == postgresDialect {
		return DialectPostgres
	}
	return DialectSQLite
}

// dialectNamed is the inverse of String.
func dialectNamed(name string) dialect {
	if name == DialectPostgres {
		return postgresDialect
	}
	return sqliteDialect
}

// maxParams is how many bind parameters one statement may carry (SQLite's
// SQLITE_MAX_VARIABLE_NUMBER, PostgreSQL's protocol limit).
func (d dialect) maxParams() int {
	if d == postgresDialect {
		return 65535
	}
	return 32766
}

// timeArg is a point in time as the database stores it: timestamptz on
// PostgreSQL, integer microseconds since the Unix epoch on SQLite. Both
// keep exactly the microseconds, so storage truncates sub-microsecond
// digits; comparisons against microsecond-aligned bounds stay exact.
func (d dialect) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d == postgresDialect {
		return t
	}
	return t.UnixMicro()
}

// valuesClause returns the VALUES list of a multi-row insert with native
// placeholders: "(?, ?), (?, ?)" or "($1, $2), ($3, $4)".
func (d dialect) valuesClause(rows, cols int) string {
	var b strings.Builder
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		b.WriteString(d.placeholders(r*cols+1, cols))
		b.WriteByte(')')
	}
	return b.String()
}

// placeholders returns n native placeholders, numbered from first on
// PostgreSQL: "?, ?" or "$3, $4".
func (d dialect) placeholders(first, n int) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteString(", ")
		}
		if d == postgresDialect {
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(first + k))
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
