package graph

import (
	"encoding/base64"
	"encoding/json"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Lists are keyset-paginated: `page` is an opaque cursor naming the last item
// of the previous page, so every page costs the same and no item is skipped
// or repeated while others are added.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// pageArgs validates the `page` and `limit` arguments of a list.
func pageArgs(page *string, limit *int) (store.Page, error) {
	p := store.Page{Limit: DefaultPageSize}
	if limit != nil {
		switch {
		case *limit < 0 || *limit > MaxPageSize:
			return p, Invalid("limit", "must be between 0 and %d", MaxPageSize)
		case *limit > 0:
			p.Limit = *limit
		}
	}
	if page != nil && *page != "" {
		raw, err := base64.RawURLEncoding.DecodeString(*page)
		var k store.Keyset
		if err != nil || json.Unmarshal(raw, &k) != nil || k.ID == "" {
			return p, Invalid("page", "is not a page identifier returned by this list")
		}
		p.After = &k
	}
	return p, nil
}

// pageOf cuts the rows a store list returned (one more than asked, when more
// exist) down to the page and says where the next one starts.
func pageOf[T any](rows []T, p store.Page, key func(T) store.Keyset) (items []T, next *model.ListNext, info *model.PageInfo) {
	info = &model.PageInfo{}
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
		k, _ := json.Marshal(key(rows[len(rows)-1]))
		cursor := base64.RawURLEncoding.EncodeToString(k)
		next = &model.ListNext{Page: cursor}
		info.HasNextPage = true
	}
	if len(rows) > 0 {
		k, _ := json.Marshal(key(rows[len(rows)-1]))
		end := base64.RawURLEncoding.EncodeToString(k)
		info.EndCursor = &end
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, next, info
}
