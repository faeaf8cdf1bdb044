package legacy

import (
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
)

// greetings maps greeting phrases (as tokens joined by spaces) to the
// language of the reply.
var greetings = map[string]string{
	"hello": "en", "hi": "en", "hey": "en", "hiya": "en", "howdy": "en", "greetings": "en",
	"good morning": "en", "good afternoon": "en", "good evening": "en", "good day": "en",
	"bonjour": "fr", "salut": "fr", "bonsoir": "fr", "coucou": "fr",
	"hallo": "de", "guten tag": "de", "guten morgen": "de", "guten abend": "de", "servus": "de", "moin": "de",
	"hola": "es", "buenos días": "es", "buenos dias": "es", "buenas tardes": "es", "buenas noches": "es", "buenas": "es",
	"ciao": "it", "buongiorno": "it", "buonasera": "it", "salve": "it",
	"olá": "pt", "ola": "pt", "oi": "pt", "bom dia": "pt", "boa tarde": "pt", "boa noite": "pt",
	"hoi": "nl", "goedemorgen": "nl", "goedendag": "nl", "goedemiddag": "nl",
	"hej": "sv", "hei": "sv", "hallå": "sv",
	"cześć": "pl", "dzień dobry": "pl",
	"привет": "ru", "здравствуйте": "ru",
	"merhaba": "tr", "selam": "tr",
	"こんにちは": "ja", "おはよう": "ja", "おはようございます": "ja",
	"你好": "zh", "您好": "zh",
	"안녕하세요": "ko", "안녕": "ko",
	"مرحبا": "ar", "السلام عليكم": "ar",
	"नमस्ते": "hi",
}

// greetingReplies answers a greeting in its language.
var greetingReplies = map[string]string{
	"en": "Hello! How can I help you today?",
	"fr": "Bonjour ! Comment puis-je vous aider ?",
	"de": "Hallo! Wie kann ich Ihnen helfen?",
	"es": "¡Hola! ¿En qué puedo ayudarte?",
	"it": "Ciao! Come posso aiutarti?",
	"pt": "Olá! Como posso ajudar?",
	"nl": "Hallo! Waarmee kan ik je helpen?",
	"sv": "Hej! Hur kan jag hjälpa dig?",
	"pl": "Cześć! W czym mogę pomóc?",
	"ru": "Здравствуйте! Чем могу помочь?",
	"tr": "Merhaba! Size nasıl yardımcı olabilirim?",
	"ja": "こんにちは！何かお手伝いできることはありますか？",
	"zh": "你好！有什么可以帮您？",
	"ko": "안녕하세요! 무엇을 도와드릴까요?",
	"ar": "مرحبا! كيف يمكنني مساعدتك؟",
	"hi": "नमस्ते! मैं आपकी कैसे मदद कर सकता हूँ?",
}

// fillers may follow a greeting without making the message more than a
// greeting ("hi there", "bonjour à tous").
var fillers = []string{
	"there", "all", "everyone", "everybody", "friend", "friends", "bot", "team", "again", "you", "folks",
	"à", "tous", "toi", "zusammen", "a", "todos", "tutti", "allemaal", "alle",
}

// Greeting recognizes a message that is only a greeting, in one of the
// languages above, and returns the reply in that language. A greeting
// followed by a question ("hello, how do I reset my password?") is not
// one: the later stages answer it.
func Greeting(message string) (reply string, ok bool) {
	tokens := chat.Tokens(message)
	for n := min(len(tokens), 3); n >= 1; n-- {
		lang, found := greetings[strings.Join(tokens[:n], " ")]
		if !found {
			continue
		}
		for _, t := range tokens[n:] {
			if !slices.Contains(fillers, t) {
				return "", false
			}
		}
		return greetingReplies[lang], true
	}
	return "", false
}
