package chatlog

import "github.com/catsrv/catsrv/core/analytics"

// Storable drops the filter values that could never have been stored (NUL
// bytes, invalid UTF-8, oversized): they match nothing, and PostgreSQL
// rejects NUL bytes outright. It reports false when the CAT name or every
// value of some filter is unstorable, so the selection matches nothing and
// no store need be asked.
func Storable(s analytics.Selection) (analytics.Selection, bool) {
	if analytics.CheckText("cat", s.Cat) != nil {
		return s, false
	}
	lists := []*[]string{&s.Filters.Topics, &s.Filters.Models, &s.Filters.Personas, &s.Filters.QuestionIDs, &s.Filters.AnswerIDs}
	for _, values := range lists {
		if len(*values) == 0 {
			continue
		}
		kept := make([]string, 0, len(*values))
		for _, v := range *values {
			if analytics.CheckText("filter", v) == nil {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			return s, false
		}
		*values = kept
	}
	return s, true
}
