package catconfig

import (
	"math"
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Price holds cat.pricing.<model>.*: what the model costs in US dollars
// per million input and output tokens.
type Price struct {
	InputPerMTok  float64 `config:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok float64 `config:"output_per_mtok" json:"output_per_mtok"`
}

// The leaves of a cat.pricing.<model> key.
const (
	PriceInputKey  = "input_per_mtok"
	PriceOutputKey = "output_per_mtok"
)

// PricingKey splits a key cat.pricing.<model>.input_per_mtok (or
// .output_per_mtok) into its model and leaf. A model name may hold dots
// (gpt-4.1): it is everything between the prefix and the leaf.
func PricingKey(key string) (model, leaf string, ok bool) {
	rest, ok := strings.CutPrefix(key, "cat.pricing.")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return "", "", false
	}
	model, leaf = rest[:i], rest[i+1:]
	if leaf != PriceInputKey && leaf != PriceOutputKey {
		return "", "", false
	}
	return model, leaf, true
}

// Set sets the leaf of a price named by PricingKey.
func (p *Price) Set(leaf string, v float64) {
	if leaf == PriceInputKey {
		p.InputPerMTok = v
	} else {
		p.OutputPerMTok = v
	}
}

// PriceOf returns the CAT's price of a model, zero when it has none.
func (c Cat) PriceOf(model string) analytics.Price {
	p := c.Chat.Pricing[model]
	return analytics.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
}

// Priced returns the interaction with its cost computed from the CAT's
// pricing of its model when it has none (analytics.Usage.WithCost): what
// every writer of interactions (ingestion, import, chat turns) applies
// before it stores one.
func (c Cat) Priced(i analytics.Interaction) analytics.Interaction {
	if i.Usage.CostUSD == 0 && len(c.Chat.Pricing) > 0 {
		i.Usage = i.Usage.WithCost(c.PriceOf(i.Model))
	}
	return i
}

// validatePricing checks cat.pricing: model names storable as a model,
// prices finite and >= 0.
func (c Chat) validatePricing() error {
	for model, p := range c.Pricing {
		if strings.TrimSpace(model) == "" || analytics.CheckText("model", model) != nil {
			return errs.New(errs.KindInvalid, "cat.pricing: %q is not a model name", model)
		}
		for _, v := range [...]struct {
			leaf string
			v    float64
		}{{PriceInputKey, p.InputPerMTok}, {PriceOutputKey, p.OutputPerMTok}} {
			if !(v.v >= 0) || math.IsInf(v.v, 1) {
				return errs.New(errs.KindInvalid, "cat.pricing.%s.%s: %v is not a number >= 0", model, v.leaf, v.v)
			}
		}
	}
	return nil
}
