package authapi

import (
	"context"
	"net/url"
)

// listProviders answers GET /providers[?catname=]: the providers that the
// CAT enables and this server has credentials for, so a sign-in page shows
// only buttons that can work. It reveals no more than POST /<provider>
// would.
func (a *authAPI) listProviders(ctx context.Context, in *catQuery) (*providersOutput, error) {
	cat, err := a.cat(ctx, in.Cat)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	out := ProvidersResponse{Cat: cat.Name, Providers: []ProviderEntry{}}
	for _, p := range a.d.names() {
		if providerEnabled(cat, p) && a.d.Providers[p] != nil {
			out.Providers = append(out.Providers, ProviderEntry{
				Name:        p,
				DisplayName: a.d.displayName(p),
				StartURL:    Prefix + "/" + p + "?catname=" + url.QueryEscape(cat.Name),
			})
		}
	}
	return &providersOutput{Body: out}, nil
}
