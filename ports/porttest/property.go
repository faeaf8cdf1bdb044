package porttest

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// Property test sizes: enough variety to find disagreements, small enough
// to run in a few seconds on a real database.
const (
	propertyLogs    = 10
	propertyQueries = 25
	// propertyLogsRace is propertyLogs under the race detector and -short.
	propertyLogsRace = 3
)

// PropertySeedEnv names the environment variable that fixes the property
// test's base seed, to replay a failure.
const PropertySeedEnv = "CATSRV_PROPERTY_SEED"

// testProperty compares the store with the reference over random logs and
// random queries. Each log has its own seed, in the subtest's name.
func testProperty(t *testing.T, open func(t *testing.T) (ports.InteractionLog, ports.Aggregator)) {
	base := propertyBase(t)
	logs := uint64(propertyLogs)
	if underRace || testing.Short() {
		logs = propertyLogsRace
	}
	for k := range logs {
		seed := base + k
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay with %s=%d", PropertySeedEnv, seed)
				}
			})
			r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			h := newHarness(t, open)
			g := newGenerator(r)
			for range 1 + r.IntN(3) {
				h.append(g.log(50 + r.IntN(200))...)
			}
			for range propertyQueries {
				q := g.query(h.ref)
				h.expect(q.Selection())
				h.expectQuery(q)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// propertyBase is the base seed of a property test: PropertySeedEnv's
// value, or the time.
func propertyBase(t *testing.T) uint64 {
	base := uint64(time.Now().UnixNano()) // #nosec G115 -- any seed will do
	if s := os.Getenv(PropertySeedEnv); s != "" {
		var err error
		if base, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", PropertySeedEnv, s, err)
		}
	}
	return base
}

// generator makes random logs and queries from small pools of look-alike
// values, so that filters hit, miss and nearly hit.
type generator struct {
	r *rand.Rand
}

func newGenerator(r *rand.Rand) *generator { return &generator{r: r} }

var (
	genCats      = []string{catAlpha, catAlpha, catAlpha, catBeta}
	genKinds     = []string{"api", "api", "api", "api", "api", "feedback", "API", "system"}
	genTopics    = []string{"billing", "Billing", "billing ", "shipping", "returns", "日本語", "%", "_", "a_b"}
	genModels    = []string{"model-a", "model-b", "Model-A", "o'model"}
	genPersonas  = []string{"student", "teacher", "admin", "Student"}
	genQuestions = []string{
		"How do I reset my password?", "how do I reset my password?", "How do I reset my password? ",
		"Where is my parcel?", "Can I get a refund?", "Qu'est-ce que c'est ?", "¿Dónde está?",
		"'; DROP TABLE interactions; --", "100% sure?", "snake_case?", "Line\nbreak?", "🚀?",
	}
	genAnswers = []string{
		"Use the reset link.", "use the reset link.", "It ships tomorrow.", "Yes.", "No.",
		"C'est ça.", "50% off", "Sí.",
	}
	genGivenIDs = []string{"Q1", "Q2", "q1", "Q1 ", "id'1", "%"}
)

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

// genDays is the span of days random logs cover, from day0.
const genDays = 10

// at returns a random time in the span, often on or next to a midnight.
func (g *generator) at() time.Time {
	d := day(g.r.IntN(genDays))
	switch g.r.IntN(6) {
	case 0:
		return d
	case 1:
		return d.Add(-time.Microsecond)
	case 2:
		return d.Add(-time.Nanosecond)
	case 3:
		return d.Add(time.Duration(g.r.Int64N(int64(24 * time.Hour)))).In(time.FixedZone("UTC-5", -5*60*60))
	default:
		return d.Add(time.Duration(g.r.Int64N(int64(24 * time.Hour))))
	}
}

func (g *generator) log(n int) []analytics.Interaction {
	out := make([]analytics.Interaction, n)
	for k := range out {
		i := event(g.at(), pick(g.r, genTopics), pick(g.r, genModels), pick(g.r, genPersonas),
			pick(g.r, genQuestions), pick(g.r, genAnswers))
		i.Cat, i.EventKind = pick(g.r, genCats), pick(g.r, genKinds)
		if g.r.IntN(4) == 0 {
			i.QuestionID = pick(g.r, genGivenIDs)
		}
		if g.r.IntN(5) == 0 {
			i.AnswerID = pick(g.r, genGivenIDs)
		}
		out[k] = i
	}
	return out
}

// query returns a random query: a CAT (sometimes absent), bounds at UTC
// midnights or open, and filters mixing present and absent values.
func (g *generator) query(ref []analytics.Interaction) analytics.Query {
	q := analytics.Query{Cat: pick(g.r, append(genCats, "gamma"))}
	if g.r.IntN(3) > 0 {
		q.Range.Start = day(g.r.IntN(genDays+2) - 1)
	}
	if g.r.IntN(3) > 0 {
		q.Range.End = day(g.r.IntN(genDays+2) - 1)
		if !q.Range.Start.IsZero() && !q.Range.End.After(q.Range.Start) && g.r.IntN(4) > 0 {
			q.Range.End = q.Range.Start.AddDate(0, 0, 1+g.r.IntN(3))
		}
	}
	if g.r.IntN(4) == 0 {
		q.Limit = 1 + g.r.IntN(3)
	}
	if g.r.IntN(5) == 0 {
		q.Window = analytics.Window{Paged: true, Offset: g.r.IntN(3), Search: pick(g.r, []string{"", "e", "PARCEL", "never"})}
	}
	present := map[analytics.Dimension][]string{}
	for _, i := range ref {
		for _, d := range analytics.Dimensions {
			present[d] = append(present[d], i.Key(d))
		}
	}
	absent := []string{"absent", "", "BILLING", analytics.DeriveQuestionID("never asked"), analytics.DeriveAnswerID("never said")}
	for _, d := range analytics.Dimensions {
		if g.r.IntN(3) > 0 || len(present[d]) == 0 {
			continue
		}
		vals := make([]string, 1+g.r.IntN(3))
		for k := range vals {
			if g.r.IntN(4) == 0 {
				vals[k] = pick(g.r, absent)
			} else {
				vals[k] = pick(g.r, present[d])
			}
		}
		switch d {
		case analytics.Topic:
			q.Filters.Topics = vals
		case analytics.Model:
			q.Filters.Models = vals
		case analytics.Persona:
			q.Filters.Personas = vals
		case analytics.Question:
			q.Filters.QuestionIDs = vals
		case analytics.Answer:
			q.Filters.AnswerIDs = vals
		}
	}
	return q
}
