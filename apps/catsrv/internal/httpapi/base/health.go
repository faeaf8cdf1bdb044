package base

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
)

// HealthStatus is the body of /healthz.
type HealthStatus struct {
	Status string `json:"status" enum:"ok"`
}

// ReadyStatus is the body of /readyz.
type ReadyStatus struct {
	Status  string `json:"status" enum:"ready,unavailable"`
	Message string `json:"message,omitempty" doc:"Why the service is not ready."`
}

// readyOutput lets /readyz choose its status.
type readyOutput struct {
	Status int
	Body   ReadyStatus
}

// notReadyMessage is all a client learns of why the service is not ready;
// the cause is logged.
const notReadyMessage = "a dependency is not available"

// tagHealth groups the probes in the document.
const tagHealth = "health"

// RegisterHealth adds /healthz and /readyz. ready answers /readyz (nil:
// always ready); log receives why the service is not ready.
func RegisterHealth(api huma.API, ready func(ctx context.Context) error, log *slog.Logger) {
	api.OpenAPI().Tags = append(api.OpenAPI().Tags, &huma.Tag{Name: tagHealth, Description: "Liveness and readiness probes."})
	h := health{ready: ready, log: log}
	huma.Register(api, huma.Operation{
		OperationID: "getHealthz",
		Method:      http.MethodGet,
		Path:        "/healthz",
		Summary:     "Liveness",
		Description: "Answers 200 while the process serves requests.",
		Tags:        []string{tagHealth},
		Security:    Public,
		// Declared, or huma would add a default response of its own.
		Responses: DocumentErrors(api, HumaErrors, http.StatusInternalServerError),
	}, func(context.Context, *struct{}) (*Body[HealthStatus], error) {
		return &Body[HealthStatus]{HealthStatus{Status: "ok"}}, nil
	})

	registry := api.OpenAPI().Components.Schemas
	huma.Register(api, huma.Operation{
		OperationID: "getReadyz",
		Method:      http.MethodGet,
		Path:        "/readyz",
		Summary:     "Readiness",
		Description: "Answers 200 when the database is reachable and migrated, 503 otherwise.",
		Tags:        []string{tagHealth},
		Security:    Public,
		Responses: map[string]*huma.Response{
			"503": {
				Description: "Not ready.",
				Content: map[string]*huma.MediaType{
					"application/json": {Schema: registry.Schema(reflect.TypeFor[ReadyStatus](), true, "ReadyStatus")},
				},
			},
		},
	}, h.readyz)
}

// health answers the readiness probe.
type health struct {
	ready func(ctx context.Context) error
	log   *slog.Logger
}

func (s health) readyz(ctx context.Context, _ *struct{}) (*readyOutput, error) {
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, "not ready", slog.String("error", err.Error()))
			return &readyOutput{Status: http.StatusServiceUnavailable, Body: ReadyStatus{Status: "unavailable", Message: notReadyMessage}}, nil
		}
	}
	return &readyOutput{Status: http.StatusOK, Body: ReadyStatus{Status: "ready"}}, nil
}
