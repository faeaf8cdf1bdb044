// Package demo implements `catsrv demo`: it writes realistic interaction
// logs in the import format, so the service can be tried, shown and load
// tested without real users' questions.
//
// What the data looks like: questions drawn Zipf-like (s = 1.1) from 10000
// texts built from templates of 8 topics, plus 5% one-off questions typed by
// users (some not in English); answers from 2000 texts, mostly the one that
// goes with the question; four models and four personas with skewed shares;
// 10% of lines are feedback, ui_click or error events; time-ordered lines
// over the last Days days with quieter nights and weekends; users holding
// multi-turn conversations. One question and one answer in 20 carry their
// id in the log (always the same id for the same text); the rest leave the
// ids to be derived. The same options and seed give the same bytes.
package demo

import (
	"bufio"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// Options says what to generate.
type Options struct {
	// Interactions is the number of lines.
	Interactions int
	// Cats are the CATs the lines belong to, the first the busiest.
	Cats []string
	// Days is the length of the time window, ending at End.
	Days int
	// Seed picks the data set.
	Seed uint64
	// End is the exclusive end of the time window.
	End time.Time
}

// MaxDays bounds the time window.
const MaxDays = 3660

// Generate writes opts.Interactions lines of JSON Lines to w, in the format
// of jsonl.Encode.
func Generate(w io.Writer, opts Options) error {
	if err := opts.check(); err != nil {
		return err
	}
	g := newGenerator(opts)
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for k := range opts.Interactions {
		line = jsonl.AppendLine(line[:0], g.interaction(k))
		if _, err := bw.Write(line); err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "writing demo data failed")
		}
	}
	if err := bw.Flush(); err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "writing demo data failed")
	}
	return nil
}

func (o Options) check() error {
	switch {
	case o.Interactions < 0:
		return errs.New(errs.KindInvalid, "interactions must not be negative")
	case len(o.Cats) == 0:
		return errs.New(errs.KindInvalid, "at least one CAT is needed")
	case o.Days < 1 || o.Days > MaxDays:
		return errs.New(errs.KindInvalid, "days must be between 1 and %d", MaxDays)
	case o.End.IsZero():
		return errs.New(errs.KindInvalid, "the end of the time window is needed")
	}
	for k, c := range o.Cats {
		if !catconfig.ValidName(c) {
			return errs.New(errs.KindInvalid, "invalid CAT name %q: use 1-64 of a-z, 0-9, '-', '_'", c)
		}
		if slices.Contains(o.Cats[:k], c) {
			return errs.New(errs.KindInvalid, "CAT %s is listed twice", c)
		}
	}
	return nil
}

// Shares of the whole, skewed as real traffic is.
var (
	models     = weighted[string]{items: []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "llama-3-70b"}, weights: []float64{35, 30, 20, 15}}
	personas   = weighted[string]{items: []string{"customer", "agent", "developer", "admin"}, weights: []float64{70, 15, 10, 5}}
	otherKinds = weighted[string]{items: []string{"feedback", "ui_click", "error"}, weights: []float64{5, 3, 2}}
)

const (
	apiShare     = 0.90
	freeShare    = 0.05
	otherAnswer  = 0.15 // how often a question gets another answer than its usual one
	continueConv = 0.70 // how often a line continues a running conversation
	userCount    = 20000
	liveSessions = 64 // conversations running at once
)

// conversation is one user's session with one CAT and one model.
type conversation struct {
	id, user, cat, model, persona string
}

type generator struct {
	r         *rand.Rand
	u         *universe
	zipf      *rand.Zipf
	userZipf  *rand.Zipf
	cats      weighted[string]
	personaOf []string // by user number: a user keeps one persona
	live      [liveSessions]*conversation
	times     *timeline
	// ur draws usage and feedback, apart from r so that the rest of the
	// log is what it was before usage was added.
	ur *rand.Rand
}

func newGenerator(opts Options) *generator {
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)) //nolint:gosec // demo data is reproducible from a seed, not secret
	g := &generator{
		r:        r,
		ur:       rand.New(rand.NewPCG(opts.Seed^0x5bd1e995, opts.Seed+1)), //nolint:gosec // reproducible, not secret
		u:        theUniverse(),
		zipf:     rand.NewZipf(r, 1.1, 1, questionCount-1),
		userZipf: rand.NewZipf(r, 1.2, 20, userCount-1),
		cats:     weighted[string]{items: opts.Cats},
	}
	for k := range opts.Cats {
		g.cats.weights = append(g.cats.weights, 1/float64(k+1))
	}
	g.personaOf = make([]string, userCount)
	for k := range g.personaOf {
		g.personaOf[k] = personas.pick(r)
	}
	g.times = newTimeline(opts.End, opts.Days, max(opts.Interactions, 1), r)
	return g
}

// interaction makes the k-th line.
func (g *generator) interaction(k int) analytics.Interaction {
	c := g.conversation()
	i := analytics.Interaction{
		Time: g.times.at(k), Cat: c.cat, EventKind: analytics.EventKindAPI,
		Model: c.model, Persona: c.persona, UserID: c.user, ConversationID: c.id,
	}
	if g.r.Float64() >= apiShare {
		i.EventKind = otherKinds.pick(g.r)
	}
	if g.r.Float64() < freeShare {
		i.Question, i.Topic = g.freeText(k)
		answer := slices.Index(topics, i.Topic)*answersPerTopic + g.r.IntN(answersPerTopic)
		i.Answer, i.AnswerID = g.u.answers[answer], g.u.answerIDs[answer]
		return g.withUsage(i)
	}
	q := g.u.questions[g.zipf.Uint64()]
	answer := q.answer
	if g.r.Float64() < otherAnswer {
		subject := answer / variantsPerNoun // same topic and noun, other wording
		answer = subject*variantsPerNoun + g.r.IntN(variantsPerNoun)
	}
	i.Question, i.Topic, i.QuestionID = q.text, topics[q.topic], q.explicitID
	i.Answer, i.AnswerID = g.u.answers[answer], g.u.answerIDs[answer]
	return g.withUsage(i)
}

// demoPrices are what the demo's models cost, US dollars per million
// input and output tokens, and how slow each writes (ms per token).
var demoPrices = map[string]struct{ in, out, msPerToken float64 }{
	"gpt-4o": {2.5, 10, 12}, "gpt-4o-mini": {0.15, 0.6, 6}, "claude-3-5-sonnet": {3, 15, 14}, "llama-3-70b": {0.6, 0.8, 9},
}

// feedbackShare is the share of api interactions rated; upShare the share
// of those rated up.
const (
	feedbackShare = 0.08
	upShare       = 0.75
)

var downReasons = []string{"wrong", "incomplete", "off-topic", "too long"}

// withUsage adds tokens, cost, latencies and, for some, feedback to an
// api interaction.
func (g *generator) withUsage(i analytics.Interaction) analytics.Interaction {
	if !i.Counted() {
		return i
	}
	r, p := g.ur, demoPrices[i.Model]
	in, out := 150+r.Int64N(1800), 40+r.Int64N(700)
	first := 120 + r.ExpFloat64()*250
	latency := first + float64(out)*p.msPerToken*(0.7+0.6*r.Float64())
	i.Usage = analytics.Usage{InputTokens: in, OutputTokens: out,
		CostUSD:   analytics.Price{InputPerMTok: p.in, OutputPerMTok: p.out}.Cost(in, out),
		LatencyMS: analytics.MS(math.Round(latency*10) / 10), FirstTokenMS: analytics.MS(math.Round(first*10) / 10)}
	if r.Float64() < feedbackShare {
		i.Feedback.Rating = analytics.RatingUp
		if r.Float64() >= upShare {
			i.Feedback = analytics.Feedback{Rating: analytics.RatingDown, Reason: downReasons[r.IntN(len(downReasons))]}
		}
	}
	return i
}

// conversation picks a running conversation to continue or starts one.
func (g *generator) conversation() *conversation {
	slot := g.r.IntN(liveSessions)
	if c := g.live[slot]; c != nil && g.r.Float64() < continueConv {
		return c
	}
	user := int(g.userZipf.Uint64())
	c := &conversation{
		id:      "conv-" + hex16(g.r.Uint64()),
		user:    "u-" + pad5(user),
		cat:     g.cats.pick(g.r),
		model:   models.pick(g.r),
		persona: g.personaOf[user],
	}
	g.live[slot] = c
	return c
}

// weighted picks items with probabilities proportional to weights.
type weighted[T any] struct {
	items   []T
	weights []float64
}

func (w weighted[T]) pick(r *rand.Rand) T {
	var total float64
	for _, x := range w.weights {
		total += x
	}
	u := r.Float64() * total
	for k, x := range w.weights {
		if u < x {
			return w.items[k]
		}
		u -= x
	}
	return w.items[len(w.items)-1]
}
