package chatapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
)

// registerApprovals adds the routes of the agent's "ask" tool calls: the
// pending ones, and a decision on one.
func registerApprovals(api huma.API, c *chatAPI) {
	huma.Register(api, huma.Operation{
		OperationID: "listApprovals", Method: http.MethodGet, Path: "/approvals",
		Summary: "List the tool calls waiting for approval",
		Description: "The agent's ask tool calls (cat.agent.tools) waiting for a decision in the caller's turns, or in every " +
			"user's turns of the CAT for an admin. Pending approvals live in the instance running the turn.",
		Tags: []string{tagChat}, Security: security,
		Responses: errorResponses(api, http.StatusUnauthorized, http.StatusUnprocessableEntity,
			http.StatusInternalServerError, http.StatusServiceUnavailable),
	}, c.listApprovals)
	huma.Register(api, huma.Operation{
		OperationID: "decideApproval", Method: http.MethodPost, Path: "/approvals/{approval_id}",
		Summary: "Approve or deny a tool call",
		Description: "Decides an ask tool call that paused a turn (the approval_required event): approve runs it, deny gives " +
			"the model a result saying it was refused. Only the turn's user or an admin may decide: another's id is 404, " +
			"a second decision or one after the time-out (cat.agent.approval_timeout_seconds, then the call counts as denied) 409. " +
			"The decision must reach the instance running the turn.",
		Tags: []string{tagChat}, Security: security,
		Responses: errorResponses(api, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict,
			http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable),
		DefaultStatus: http.StatusNoContent,
	}, c.decideApproval)
}

func (c *chatAPI) listApprovals(ctx context.Context, in *approvalsInput) (*base.Body[PendingApprovals], error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	out := PendingApprovals{Approvals: []PendingApproval{}}
	for _, p := range c.d.Service.Approvals(who.owner, who.claims.Role == auth.RoleAdmin) {
		out.Approvals = append(out.Approvals, PendingApproval{
			ApprovalID: p.ID, UserID: p.User, Name: p.Call.Name, Arguments: p.Call.Arguments, ExpiresAt: p.ExpiresAt.UTC(),
		})
	}
	return &base.Body[PendingApprovals]{Body: out}, nil
}

func (c *chatAPI) decideApproval(ctx context.Context, in *approvalInput) (*struct{}, error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := c.d.Service.DecideApproval(who.owner, who.claims.Role == auth.RoleAdmin, in.ID, in.Body.Decision); err != nil {
		return nil, c.fail(ctx, err)
	}
	return &struct{}{}, nil
}
