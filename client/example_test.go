package client_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/catsrv/catsrv/client"
)

// bearer authenticates each request with the token (`catsrv token` prints
// one; a user gets one by logging in).
func bearer(token string) client.ClientOption {
	return client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}

// A client of a catsrv server reads a CAT's analytics, then chats with it.
// (The examples need a running server, so they are compiled, not run; the
// tests of apps/catsrv call a `catsrv serve` through this client.)
func Example() {
	ctx := context.Background()
	c, err := client.NewClientWithResponses("http://127.0.0.1:8080", bearer(os.Getenv("CATSRV_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}

	start, end := "2026-01-01", "2026-02-01"
	stats, err := c.GetAllWarehouseWithResponse(ctx, &client.GetAllWarehouseParams{
		Catname: "demo", StartDate: &start, EndDate: &end,
	})
	if err != nil {
		log.Fatal(err) // the request failed, or the answer is not what the document says
	}
	switch {
	case stats.JSON200 != nil:
		fmt.Println("interactions:", stats.JSON200.TotalInteractions)
		for _, m := range stats.JSON200.ModelCounts {
			fmt.Printf("  %s: %d\n", m.Membership, m.Count)
		}
	case stats.JSON401 != nil:
		log.Fatalf("%s: %s", stats.JSON401.Error, stats.JSON401.Message)
	default:
		log.Fatalf("status %d: %s", stats.StatusCode(), stats.Body)
	}

	cat := "demo"
	reply, err := c.PostChatWithResponse(ctx, &client.PostChatParams{Catname: &cat},
		client.ChatRequest{Message: "How do I reset my password?"})
	if err != nil {
		log.Fatal(err)
	}
	if reply.JSON200 == nil {
		log.Fatalf("status %d: %s", reply.StatusCode(), reply.Body)
	}
	fmt.Println(reply.JSON200.Message)
}

// With stream true, a chat answers Server-Sent Events: delta events with the
// next piece of the reply, then a done event with the ChatResponse (or an
// error event). The plain Client returns the *http.Response, to read the
// events as they arrive.
func Example_stream() {
	ctx := context.Background()
	c, err := client.NewClient("http://127.0.0.1:8080", bearer(os.Getenv("CATSRV_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	cat, stream := "demo", true
	resp, err := c.PostChat(ctx, &client.PostChatParams{Catname: &cat},
		client.ChatRequest{Message: "How do I reset my password?", Stream: &stream})
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// An error found before the first event: a JSON ErrorBody.
		parsed, err := client.ParsePostChatResponse(resp)
		if err != nil {
			log.Fatal(err)
		}
		log.Fatalf("status %d: %s", parsed.StatusCode(), parsed.Body)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			fmt.Println(data) // {"text":"..."} for delta events, the ChatResponse for done
		}
	}
	if err := lines.Err(); err != nil {
		log.Fatal(err)
	}
}
