package demo

import "strconv"

// issue is a problem users describe in their own words, with the topic it
// belongs to.
type issue struct{ text, topic string }

// Words of the one-off questions users type themselves.
var (
	issues = []issue{{"stopped working", "technical"}, {"won't turn on", "technical"}, {"keeps disconnecting", "technical"},
		{"shows a blank screen", "technical"}, {"was charged twice", "billing"}, {"never arrived", "shipping"},
		{"came with a scratch", "returns"}}
	whenBroken = []string{"since Monday", "since yesterday", "after the update", "this morning", "again today"}
	whenBought = []string{"last week", "on Monday", "over the weekend", "yesterday", "a month ago"}
)

// freeText makes the one-off question of line k and its topic: what a user
// types in their own words, unique thanks to an order number derived from k.
func (g *generator) freeText(k int) (string, string) {
	order := "#" + strconv.Itoa(10_000_000+k)
	product := products[g.r.IntN(len(products))]
	is := issues[g.r.IntN(len(issues))]
	switch g.r.IntN(10) {
	case 0:
		return "¿Por qué mi " + product + " no funciona? Pedido " + order, "technical"
	case 1:
		return "Wie kann ich mein " + product + " zurückgeben? Bestellung " + order, "returns"
	case 2:
		return product + " の注文 " + order + " をキャンセルしたいです", "returns"
	case 3, 4:
		return "hi, my " + product + " " + is.text + " " + whenBroken[g.r.IntN(len(whenBroken))] + ", order " + order, is.topic
	case 5, 6:
		return product + " " + is.text + " again?? ticket " + order, is.topic
	default:
		return "Hello, I bought a " + product + " " + whenBought[g.r.IntN(len(whenBought))] + " and it " + is.text +
			". Order number " + order + ".", is.topic
	}
}

// hex16 writes x as 16 hex digits.
func hex16(x uint64) string {
	s := strconv.FormatUint(x, 16)
	return "0000000000000000"[len(s):] + s
}

// pad5 writes n with at least 5 digits.
func pad5(n int) string {
	s := strconv.Itoa(n)
	if len(s) >= 5 {
		return s
	}
	return "00000"[len(s):] + s
}
