package graph

import (
	"context"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Viewer is the authenticated user (GET /v1/user).
func (r *queryResolver) Viewer(ctx context.Context) (*store.User, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	return caller.User, nil
}

type userResolver struct{ *Resolver }

var _ generated.UserResolver = (*userResolver)(nil)

func (r *userResolver) Urls(_ context.Context, u *store.User) (*model.UserURLs, error) {
	return &model.UserURLs{Location: r.URLs.API("/v1/users/" + pathEscape(u.ID))}, nil
}
