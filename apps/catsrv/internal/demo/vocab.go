package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Topics, in vocabulary order.
var topics = []string{"billing", "account", "shipping", "technical", "returns", "pricing", "security", "general"}

// products fill the {p} slot of every question template.
var products = []string{
	"mobile app", "web dashboard", "Pro plan", "Team plan", "smart thermostat", "wireless earbuds", "4K monitor",
	"espresso machine", "standing desk", "e-reader", "fitness tracker", "Wi-Fi router", "Café Mini grinder",
}

// topicVocab is one topic's question templates ({x} a noun, {p} a product),
// its nouns and the body of its answers.
type topicVocab struct {
	templates []string
	nouns     []string
	answer    string
}

// vocab is indexed like topics. 8 topics × 10 templates × 10 nouns × 13
// products give 10400 questions, of which questionCount are used.
var vocab = []topicVocab{
	{ // billing
		templates: []string{"How do I update the {x} for my {p}?", "Where can I download the {x} for my {p}?",
			"Why was the {x} declined for my {p}?", "Can I change the {x} after paying for the {p}?",
			"Why was I charged twice for the {p} after changing my {x}?", `Why does checkout for the {p} say "{x} invalid"?`,
			"Can I add a second {x} to my {p} subscription?", "When does the new {x} apply to my {p}?",
			"Who can see the {x} on our company's {p}?", "Is there a fee for changing the {x} on the {p}?"},
		nouns: []string{"invoice", "payment method", "credit card", "billing address", "receipt", "subscription renewal",
			"tax ID", "promo code", "billing currency", "payment plan"},
		answer: "you can manage the {x} under Settings > Billing; changes apply from the next billing cycle and a confirmation email follows.",
	},
	{ // account
		templates: []string{"How do I reset my {x} for the {p}?", "How can I change my {x} in the {p}?",
			"Where do I see my {x} on the {p}?", "Why can't I update my {x} in the {p}?", "Can I remove my {x} from the {p}?",
			"Does changing my {x} on the {p} log me out everywhere?", "Can my team admin see my {x} in the {p}?",
			"The {p} keeps rejecting my {x}, what should I do?", "Is my {x} shared between the {p} and the website?",
			"How do I get my old {x} back on the {p}?"},
		nouns: []string{"password", "email address", "username", "two-factor login", "profile photo", "phone number",
			"display language", "notification settings", "linked accounts", "recovery codes"},
		answer: "open Settings > Account > {x}, confirm with your current password and save; the change reaches all your devices within a minute.",
	},
	{ // shipping
		templates: []string{"Where is the {x} for my {p} order?", "Can I change the {x} after ordering the {p}?",
			"Why hasn't the {x} for my {p} updated in days?", "How much does {x} cost for the {p}?",
			"Is {x} available for the {p} in my country?", `The {x} for my {p} says "delivered" but nothing arrived, help?`,
			"Can I choose a {x} when I order the {p}?", "Who pays the {x} on an international {p} order?",
			"What happens if I miss the {x} for my {p}?", "Can someone else collect the {p} if the {x} is in my name?"},
		nouns: []string{"tracking number", "delivery address", "delivery date", "express shipping", "package", "courier",
			"pickup point", "customs fee", "delivery window", "signature requirement"},
		answer: "the {x} is shown on the order page under My orders; if it has not changed in 48 hours, the courier's site usually has newer details.",
	},
	{ // technical
		templates: []string{"How do I fix the {x} on my {p}?", "Why does the {x} keep failing on the {p}?",
			`The {p} shows "{x}", what does that mean?`, "Is there a known issue with the {x} on the {p}?",
			"How long should a {x} take on the {p}?", "Can I undo a {x} on the {p}?",
			"What's the fastest way to troubleshoot the {x} on my {p}?", "Does the {x} on the {p} work offline?",
			"Why is the {x} slower on the {p} than before?", "Who can help me with the {x} on the {p} today?"},
		nouns: []string{"firmware update", "Wi-Fi connection", "Bluetooth pairing", "battery", "sync", "error code E42",
			"screen", "login page", "app crash", "factory reset"},
		answer: "for the {x}, restart the device, make sure it runs the latest version and try again; if it persists, send us the diagnostic log from Settings > Help.",
	},
	{ // returns
		templates: []string{"How do I get a {x} for the {p}?", "How long does a {x} take for the {p}?",
			"Can I ask for a {x} on a {p} I bought on sale?", "Is there a {x} when returning the {p}?",
			"What is the {x} policy for the {p}?", "My {p} arrived with a {x}, what now?",
			"Can I get a {x} for the {p} without the original box?", "Why was my {x} for the {p} rejected?",
			"Does a {x} for the {p} cover shipping costs?", "Where do I track my {x} for the {p}?"},
		nouns: []string{"return label", "refund", "exchange", "return window", "restocking fee", "damaged item",
			"wrong size", "missing part", "warranty claim", "store credit"},
		answer: "start from My orders > Return or exchange, pick the item and the {x} option; we email a label and confirm within 3–5 business days.",
	},
	{ // pricing
		templates: []string{"Is there a {x} for the {p}?", "How does the {x} work for the {p}?",
			"Why did the {x} of the {p} change?", "Can I combine a {x} with a coupon on the {p}?",
			"Does the {x} for the {p} include taxes?", "When does the {x} for the {p} end?",
			"Can I switch to the {x} after buying the {p}?", "Is the {x} for the {p} cheaper than last year?",
			"What does the {x} of the {p} include?", "Who qualifies for the {x} on the {p}?"},
		nouns: []string{"student discount", "annual plan", "price match", "bulk discount", "free trial", "upgrade price",
			"monthly price", "family plan", "nonprofit discount", "loyalty program"},
		answer: "the {x} is listed on the pricing page; it applies at checkout and you can compare plans there before you commit.",
	},
	{ // security
		templates: []string{"I got a {x} about my {p}, is it real?", "How do I set up a {x} for the {p}?",
			"Where can I review each {x} on my {p}?", "How do I turn off a {x} on the {p}?",
			"Is my {x} on the {p} safe if I lose my phone?", "Why did the {p} flag a {x}?",
			"Can support see my {x} on the {p}?", "How do I report a {x} related to the {p}?",
			`What does the "{x}" warning on the {p} mean?`, "Does the {p} keep a {x} after I delete my account?"},
		nouns: []string{"suspicious login", "security key", "login alert", "phishing email", "data export", "active session",
			"trusted device", "encryption setting", "privacy setting", "access log"},
		answer: "review the {x} under Settings > Security; if anything looks unfamiliar, sign out all sessions and change your password right away.",
	},
	{ // general
		templates: []string{"Where can I find the {x} for the {p}?", "Is there a {x} for the {p} in Spanish?",
			"How do I use the {x} with the {p}?", "Who runs the {x} for {p} customers?",
			"Can I get the {x} for the {p} by email?", "What's new in the {x} for the {p}?",
			"Does the {x} cover the {p} too?", "How do I contact you about the {x} and my {p}?",
			"Is the {x} for the {p} free?", "Why can't I open the {x} for the {p}?"},
		nouns: []string{"holiday schedule", "support chat", "user manual", "gift card", "newsletter", "feedback form",
			"accessibility guide", "store location", "company address", "partner program"},
		answer: "the {x} is described in the help center; you can also reach a person through the support chat from 8:00 to 20:00 CET.",
	},
}

// openers and closers frame an answer body: each (topic, noun) has
// len(openers)×len(closers) answer variants.
var (
	openers = []string{"Sure!", "Happy to help.", "Thanks for reaching out.", "Good question.", "Here's what to do:"}
	closers = []string{"Anything else I can help with?", "Let me know if that works.", "You'll find more in the help center.",
		"Reply here if you get stuck.", "Have a great day!"}
)

const (
	questionCount     = 10000
	variantsPerNoun   = 25 // len(openers) * len(closers)
	answersPerTopic   = 10 * variantsPerNoun
	answerCount       = 8 * answersPerTopic // 2000
	explicitIDModulus = 20                  // one question and answer in 20 carries an id in the log
)

// question is one text of the question universe.
type question struct {
	text       string
	topic      int
	answer     int    // the answer usually given
	explicitID string // set for the few questions whose log lines carry their id
}

// universe is the fixed vocabulary every run draws from, the same for all
// seeds, so question texts and ids are stable across demo data sets.
type universe struct {
	questions []question // in popularity order: index 0 is the most asked
	answers   []string
	answerIDs []string // explicit ids, "" for most
}

var theUniverse = sync.OnceValue(buildUniverse)

func buildUniverse() *universe {
	u := &universe{}
	for t, tv := range vocab {
		for n, noun := range tv.nouns {
			body := capitalize(strings.ReplaceAll(tv.answer, "{x}", noun))
			for v := range variantsPerNoun {
				u.answers = append(u.answers, openers[v/len(closers)]+" "+body+" "+closers[v%len(closers)])
			}
			for j, tmpl := range tv.templates {
				for p, product := range products {
					text := strings.NewReplacer("{x}", noun, "{p}", product).Replace(tmpl)
					primary := (t*10+n)*variantsPerNoun + (j*len(products)+p)%variantsPerNoun
					u.questions = append(u.questions, question{text: capitalize(text), topic: t, answer: primary})
				}
			}
		}
	}
	// A fixed shuffle decides popularity, so the most asked questions mix topics.
	r := rand.New(rand.NewPCG(0x5eed, 0xcafe)) //nolint:gosec // a fixed order, not a secret
	r.Shuffle(len(u.questions), func(a, b int) { u.questions[a], u.questions[b] = u.questions[b], u.questions[a] })
	u.questions = u.questions[:questionCount]
	for k := range u.questions {
		if k%explicitIDModulus == explicitIDModulus-1 {
			u.questions[k].explicitID = fmt.Sprintf("faq-%05d", k)
		}
	}
	u.answerIDs = make([]string, len(u.answers))
	for k := range u.answerIDs {
		if k%explicitIDModulus == 7 {
			u.answerIDs[k] = fmt.Sprintf("kb-%04d", k)
		}
	}
	return u
}

func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
