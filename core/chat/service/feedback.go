package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// SetFeedback sets the owner's rating of an answer of theirs: the
// assistant message messageID of their conversation conversationID.
// Given again, it replaces the feedback; a zero Feedback removes it. The
// rating is analytics.RatingUp or RatingDown, the reason empty or one of
// the CAT's cat.feedback.reasons, the comment at most
// analytics.MaxFeedbackCommentChars characters of storable text. The
// feedback goes to the answer's interaction, named by the message's id
// (ports.FeedbackRecorder), so analytics counts it at once.
//
// Errors: errs.KindInvalid for a bad rating, reason or comment, an id
// chat.CheckID refuses, or a message that is not an answer (the user's,
// a tool's, or an agent's step asking for tools); errs.KindNotFound for
// an unknown CAT, a conversation that is not the owner's, a message not
// in it, or an answer without an interaction (stored before answers
// were named, or removed by retention or erasure); errs.KindUnavailable
// when no feedback recorder is configured.
func (s *Service) SetFeedback(ctx context.Context, owner chat.Owner, conversationID, messageID string, f analytics.Feedback) error {
	if s.d.Feedback == nil {
		return errs.New(errs.KindUnavailable, "feedback is not configured on this server")
	}
	if err := chat.CheckID(conversationID); err != nil {
		return err
	}
	if err := chat.CheckID(messageID); err != nil {
		return errs.New(errs.KindInvalid, "message id: %s", strings.TrimPrefix(errs.PublicMessage(err, "invalid"), "conversation id: "))
	}
	cfg, err := s.d.Cats.Cat(ctx, owner.Cat)
	if err != nil {
		return err
	}
	if f != (analytics.Feedback{}) {
		if err := checkFeedback(f, cfg.Chat.Feedback.AllowsReason); err != nil {
			return err
		}
	}
	_, messages, err := s.d.Conversations.Conversation(ctx, owner, conversationID)
	if err != nil {
		return err
	}
	i := -1
	for k, m := range messages {
		if m.ID == messageID {
			i = k
			break
		}
	}
	switch {
	case i < 0:
		return errs.New(errs.KindNotFound, "message %q not found in the conversation", clip(messageID))
	case messages[i].Role != chat.RoleAssistant || len(messages[i].ToolCalls) > 0:
		return errs.New(errs.KindInvalid, "message_id: feedback is given on the assistant's answers only, not on a %s message", kindOf(messages[i]))
	}
	return s.d.Feedback.SetFeedback(ctx, owner.Cat, messageID, f)
}

// checkFeedback checks a feedback to set (not a removal).
func checkFeedback(f analytics.Feedback, allowed func(string) bool) error {
	if f.Rating != analytics.RatingUp && f.Rating != analytics.RatingDown {
		return errs.New(errs.KindInvalid, "rating: %q is not one of up, down", clip(f.Rating))
	}
	if f.Reason != "" && !allowed(f.Reason) {
		return errs.New(errs.KindInvalid, "reason: %q is not one of the CAT's cat.feedback.reasons", clip(f.Reason))
	}
	if utf8.RuneCountInString(f.Comment) > analytics.MaxFeedbackCommentChars {
		return errs.New(errs.KindInvalid, "comment: longer than %d characters", analytics.MaxFeedbackCommentChars)
	}
	return analytics.CheckText("comment", f.Comment)
}

// kindOf names a message that takes no feedback.
func kindOf(m chat.Message) string {
	if m.Role == chat.RoleAssistant {
		return "tool-calling"
	}
	return m.Role
}

func clip(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "..."
	}
	return s
}
