package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
)

// ticking makes the fixture's clock move a second at every reading.
func ticking(f *fixture) {
	t := now
	f.clock = func() time.Time { t = t.Add(time.Second); return t }
}

// TestTurnUsage: an agent turn's interaction holds its tokens summed over
// the model's calls, the time from the turn's start to the whole answer
// and, streamed, to the first piece of text; a legacy turn records the
// time and no tokens; a turn answered in one piece has no first-token
// time. The model call carries the conversation's id.
func TestTurnUsage(t *testing.T) {
	type want struct {
		in, out         int64
		latency, first  float64
		firstTokenTimed bool
	}
	cases := []struct {
		name   string
		mode   string
		stream bool
		want   want
	}{
		// Readings: start, [first delta], answer done.
		{"agent streamed", catconfig.ModeAgent, true, want{in: 12, out: 5, latency: 2000, first: 1000, firstTokenTimed: true}},
		{"agent whole", catconfig.ModeAgent, false, want{in: 12, out: 5, latency: 1000}},
		{"legacy streamed", catconfig.ModeLegacy, true, want{latency: 2000, first: 1000, firstTokenTimed: true}},
		{"legacy whole", catconfig.ModeLegacy, false, want{latency: 1000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *catconfig.Cat) { cfg.Chat.ChatMode = c.mode })
			var convIDs []string
			f.model.CompleteFunc = func(_ context.Context, req chat.ModelRequest) (chat.Completion, error) {
				convIDs = append(convIDs, req.ConversationID)
				return chat.Completion{Text: "agent says hi", InputTokens: 12, OutputTokens: 5}, nil
			}
			f.model.StreamFunc = func(_ context.Context, req chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
				convIDs = append(convIDs, req.ConversationID)
				if err := onDelta("agent says hi"); err != nil {
					return chat.Completion{}, err
				}
				return chat.Completion{Text: "agent says hi", InputTokens: 12, OutputTokens: 5}, nil
			}
			ticking(f)
			req := request("hello there")
			req.ConversationID = "c1"
			var err error
			if c.stream {
				_, err = f.svc.Stream(t.Context(), req, service.ByMode, nil)
			} else {
				_, err = f.svc.Chat(t.Context(), req, service.ByMode)
			}
			if err != nil {
				t.Fatal(err)
			}
			u := f.turns[0].Interaction.Usage
			if u.InputTokens != c.want.in || u.OutputTokens != c.want.out || u.CostUSD != 0 {
				t.Errorf("tokens %d in, %d out, cost %v; want %d, %d, 0", u.InputTokens, u.OutputTokens, u.CostUSD, c.want.in, c.want.out)
			}
			if u.LatencyMS == nil || *u.LatencyMS != c.want.latency {
				t.Errorf("latency %v, want %v ms", u.LatencyMS, c.want.latency)
			}
			switch {
			case !c.want.firstTokenTimed && u.FirstTokenMS != nil:
				t.Errorf("first token at %v ms, want none", *u.FirstTokenMS)
			case c.want.firstTokenTimed && (u.FirstTokenMS == nil || *u.FirstTokenMS != c.want.first):
				t.Errorf("first token %v, want %v ms", u.FirstTokenMS, c.want.first)
			}
			if c.mode == catconfig.ModeAgent && (len(convIDs) != 1 || convIDs[0] != "c1") {
				t.Errorf("model calls carried conversation ids %q, want [c1]", convIDs)
			}
		})
	}
}
