package e2e_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// threadView is the conversation dialog as the page shows it.
type threadView struct {
	Open      bool       `json:"open"`
	Title     string     `json:"title"`
	Note      string     `json:"note"`
	Turns     [][]string `json:"turns"`
	Here      int        `json:"here"`
	Questions []string   `json:"questions"`
}

const readThread = `(() => {
  const d = document.getElementById('thread');
  const turns = [...d.querySelectorAll('#thread-turns li')];
  return {
    open: d.open, title: document.getElementById('thread-title').textContent, note: document.getElementById('thread-note').textContent,
    turns: turns.map((li) => [li.querySelector('.meta').textContent, li.querySelector('.q').textContent, li.querySelector('.a').textContent]),
    here: turns.findIndex((li) => li.classList.contains('here')),
  };
})()`

// logEntry is an interaction of /interactions.
type logEntry struct {
	Time           time.Time `json:"time"`
	Question       string    `json:"question"`
	Answer         string    `json:"answer"`
	Topic          string    `json:"topic"`
	Model          string    `json:"model"`
	Persona        string    `json:"persona"`
	UserID         string    `json:"user_id"`
	ConversationID string    `json:"conversation_id"`
}

// conversationTurns lists a conversation's interactions, oldest first, by
// reading all of the CAT's chat log through the API.
func conversationTurns(t *testing.T, s *site, cat, conversation string) []logEntry {
	t.Helper()
	var out []logEntry
	q := url.Values{"catname": {cat}, "limit": {"1000"}}
	for {
		var page struct {
			Interactions []logEntry `json:"interactions"`
			NextCursor   string     `json:"next_cursor"`
		}
		s.api(t, "/interactions", q.Encode(), &page)
		for _, i := range page.Interactions {
			if i.ConversationID == conversation {
				out = append(out, i)
			}
		}
		if page.NextCursor == "" {
			break
		}
		q.Set("cursor", page.NextCursor)
	}
	slices.Reverse(out)
	return out
}

// settle scrolls to the review queue and waits until it has its page, or
// is hidden on a server without the route: the page is then as long as it
// stays, and a click lands where it aims.
func settle(ctx context.Context, t *testing.T) {
	t.Helper()
	run(ctx, t, "let the review queue settle", chromedp.ScrollIntoView(chromedp.ID("review")),
		chromedp.Poll[chromedp.Void](`(() => { const r = document.getElementById('review'); return r.hidden || r.dataset.state === 'ready'; })()`,
			chromedp.WithPollingTimeout(30*time.Second)))
}

// TestThreadFromChatLog opens a conversation's thread from a chat-log row
// of the billing topic (the second page's third row, whose conversation
// has turns of other topics on other days): the dialog lists every interaction of that conversation
// the API has, oldest first, the row's own turn marked; Escape closes it
// and gives the focus back to the row's button.
func TestThreadFromChatLog(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSite(t)
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open demo and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=90&topic=billing"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	var page struct {
		Interactions []logEntry `json:"interactions"`
		NextCursor   string     `json:"next_cursor"`
	}
	s.api(t, "/interactions", view.Query+"&limit=20", &page)
	s.api(t, "/interactions", view.Query+"&limit=20&cursor="+url.QueryEscape(page.NextCursor), &page)
	row := page.Interactions[2]
	want := conversationTurns(t, s, "demo", row.ConversationID)
	// The whole thread, not the filtered log: turns of other topics too.
	if len(want) < 2 || !slices.ContainsFunc(want, func(i logEntry) bool { return i.Topic != "billing" }) {
		t.Fatalf("the seeded conversation %s has %d turns, all billing: the test needs another row", row.ConversationID, len(want))
	}

	settle(ctx, t)
	run(ctx, t, "older page", chromedp.Click(chromedp.ID("log-next")))
	run(ctx, t, "wait for the second page", chromedp.Poll[chromedp.Void](`document.getElementById('log-page').textContent.startsWith('Rows 21')`,
		chromedp.WithPollingTimeout(30*time.Second)))
	run(ctx, t, "open the third row's thread",
		chromedp.Click(chromedp.CSS(`#chatlog tbody tr:nth-child(3) button[data-action="thread"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById('thread').dataset.state === 'ready'`, chromedp.WithPollingTimeout(30*time.Second)))
	shot(ctx, t, out, "thread.png")
	got := value(ctx, t, "read the thread", chromedp.Evaluate[threadView](readThread))
	if !got.Open || got.Title != "Conversation "+row.ConversationID {
		t.Errorf("thread dialog open %v, title %q; want conversation %s", got.Open, got.Title, row.ConversationID)
	}
	var wantTurns [][]string
	here := -1
	for k, i := range want {
		wantTurns = append(wantTurns, []string{
			i.Time.UTC().Format("2006-01-02 15:04:05") + " UTC · " + i.Model + " · " + i.Topic + " · " + i.Persona,
			"User " + i.Question, "Assistant " + i.Answer,
		})
		if i.Time.Equal(row.Time) && i.Question == row.Question {
			here = k
		}
	}
	if !slices.EqualFunc(got.Turns, wantTurns, slices.Equal) {
		t.Errorf("thread shows\n %q\nthe API's conversation is\n %q", got.Turns, wantTurns)
	}
	if got.Here != here || here < 0 {
		t.Errorf("marked turn %d, want %d (the row's)", got.Here, here)
	}
	t.Logf("conversation %s: %d turns; %s", row.ConversationID, len(want), got.Note)

	run(ctx, t, "close with Escape", chromedp.KeyEvent("\x1b"),
		chromedp.Poll[chromedp.Void](`!document.getElementById('thread').open && document.activeElement.dataset.action === 'thread'`,
			chromedp.WithPollingTimeout(10*time.Second)))
}

// TestThreadOnABusyDay: on a day with more interactions than the page
// reads for a thread (5000), the thread of a row on the chat log's second
// page (the one whose conversation has the most turns in what is read)
// is read from that page's cursor down, 5000 interactions of the day: it
// shows the conversation's turns among those, says it is a busy day, and
// marks the row's turn.
func TestThreadOnABusyDay(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSiteWith(t, siteOptions{interactions: 12000, days: 1})
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open demo and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=7"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	if total, _ := strconv.Atoi(view.Total); total <= 5000 {
		t.Fatalf("demo has %d interactions today: not a busy day", total)
	}
	var page struct {
		Interactions []logEntry `json:"interactions"`
		NextCursor   string     `json:"next_cursor"`
	}
	s.api(t, "/interactions", view.Query+"&limit=20", &page)
	cursor := page.NextCursor
	s.api(t, "/interactions", view.Query+"&limit=20&cursor="+url.QueryEscape(cursor), &page)
	day := page.Interactions[0].Time.UTC().Format("2006-01-02")
	q := url.Values{"catname": {"demo"}, "startDate": {day}, "endDate": {page.Interactions[0].Time.UTC().AddDate(0, 0, 1).Format("2006-01-02")}, "limit": {"1000"}, "cursor": {cursor}}
	var read []logEntry
	for range 5 {
		var p struct {
			Interactions []logEntry `json:"interactions"`
			NextCursor   string     `json:"next_cursor"`
		}
		s.api(t, "/interactions", q.Encode(), &p)
		read = append(read, p.Interactions...)
		if p.NextCursor == "" {
			break
		}
		q.Set("cursor", p.NextCursor)
	}
	turns := func(conversation string) []logEntry {
		var out []logEntry
		for _, i := range read {
			if i.ConversationID == conversation {
				out = append(out, i)
			}
		}
		slices.Reverse(out)
		return out
	}
	pick := 0
	for k, i := range page.Interactions {
		if len(turns(i.ConversationID)) > len(turns(page.Interactions[pick].ConversationID)) {
			pick = k
		}
	}
	row := page.Interactions[pick]
	want := turns(row.ConversationID)
	if len(want) < 2 {
		t.Fatalf("no conversation of the second page has two turns in the 5000 interactions read")
	}

	settle(ctx, t)
	run(ctx, t, "older page", chromedp.Click(chromedp.ID("log-next")),
		chromedp.Poll[chromedp.Void](`document.getElementById('log-page').textContent.startsWith('Rows 21')`, chromedp.WithPollingTimeout(30*time.Second)))
	run(ctx, t, "open the row's thread",
		chromedp.Click(chromedp.CSS(`#chatlog tbody tr:nth-child(`+strconv.Itoa(pick+1)+`) button[data-action="thread"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById('thread').dataset.state === 'ready'`, chromedp.WithPollingTimeout(60*time.Second)))
	viewportShot(ctx, t, out, "thread-busy-day.png")
	got := value(ctx, t, "read the thread", chromedp.Evaluate[threadView](readThread))
	var wantTurns [][]string
	for _, i := range want {
		wantTurns = append(wantTurns, []string{i.Time.UTC().Format("2006-01-02 15:04:05") + " UTC · " + i.Model + " · " + i.Topic + " · " + i.Persona,
			"User " + i.Question, "Assistant " + i.Answer})
	}
	if !slices.EqualFunc(got.Turns, wantTurns, slices.Equal) {
		t.Errorf("thread shows\n %q\nwant the conversation's turns among the 5000 read\n %q", got.Turns, wantTurns)
	}
	t.Logf("row %d, conversation %s: %d turns", pick+1, row.ConversationID, len(want))
	if !strings.Contains(got.Note, "a busy day: the 5,000 interactions of "+day) || got.Here < 0 || got.Turns[got.Here][1] != "User "+row.Question {
		t.Errorf("note %q, marked turn %d", got.Note, got.Here)
	}
}
