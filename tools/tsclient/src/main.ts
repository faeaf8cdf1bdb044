// A TypeScript client of catsrv: openapi-fetch typed by the paths
// openapi-typescript generates from the served OpenAPI document
// (src/schema.gen.ts, not committed). apps/catsrv's TestTypeScriptClient
// type-checks it (tsc, strict), runs it against a `catsrv serve` and compares
// what it prints with the same calls made by the Go client.
//
// Usage: node dist/main.js BASE_URL TOKEN CATNAME
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.gen.js";

type Schemas = components["schemas"];

const [baseUrl, token, catname] = process.argv.slice(2);
if (!baseUrl || !token || !catname) {
  throw new Error("usage: main.js BASE_URL TOKEN CATNAME");
}

const bearer: Middleware = {
  onRequest({ request }) {
    request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
};

// The chat operations answer application/json, or text/event-stream when
// the request sets stream. Restricting the client's media types to JSON
// types each data as the JSON schema alone (ChatResponse), not as a union
// with the event stream's shape.
const api = createClient<paths, "application/json">({ baseUrl });
api.use(bearer);
const anonymous = createClient<paths, "application/json">({ baseUrl });

// must returns the data of a successful answer, failing with the status
// and the error body otherwise.
function must<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) {
    throw new Error(`${what}: status ${r.response.status}: ${JSON.stringify(r.error)}`);
  }
  return r.data;
}

const health: Schemas["HealthStatus"] = must("healthz", await anonymous.GET("/healthz"));

const cats: Schemas["CatsBody"] = must("get_cats", await api.GET("/api/v1/analytics/get_cats"));

const warehouse: Schemas["WarehouseResult"] = must(
  "all_warehouse",
  await api.GET("/api/v1/analytics/all_warehouse", { params: { query: { catname } } }),
);

// Without a token, a private CAT's analytics answer 401 with an ErrorBody.
const denied = await anonymous.GET("/api/v1/analytics/all", { params: { query: { catname } } });
const deniedError: Schemas["ErrorBody"] | undefined =
  denied.error !== undefined && "error" in denied.error ? denied.error : undefined;

// A chat answered as JSON.
const reply: Schemas["ChatResponse"] = must(
  "chat",
  await api.POST("/api/v1/cat/chat", {
    params: { query: { catname } },
    body: { message: "How do I reset my password?" },
  }),
);

// The same operation streamed: the body is Server-Sent Events, not JSON, so
// it is read as a stream (parseAs "stream") and split into events here.
const streamed = await api.POST("/api/v1/cat/chat", {
  params: { query: { catname } },
  body: { message: "And my username?", conversation_id: reply.conversation_id, stream: true },
  parseAs: "stream",
});
if (!streamed.response.ok || !streamed.data) {
  throw new Error(`streamed chat: status ${streamed.response.status}`);
}
const events = parseEvents(await new Response(streamed.data).text());
let deltas = "";
let done: Schemas["ChatResponse"] | undefined;
for (const e of events) {
  if (e.event === "delta") {
    deltas += (JSON.parse(e.data) as Schemas["DeltaEvent"]).text;
  } else if (e.event === "done") {
    done = JSON.parse(e.data) as Schemas["ChatResponse"];
  } else if (e.event === "error") {
    const err = JSON.parse(e.data) as Schemas["ErrorBody"];
    throw new Error(`streamed chat: error event ${err.error}: ${err.message}`);
  }
}

const conversations: Schemas["ConversationList"] = must(
  "conversations",
  await api.GET("/api/v1/cat/conversations", { params: { query: { catname } } }),
);

const providers: Schemas["ProvidersResponse"] = must(
  "providers",
  await anonymous.GET("/api/v1/auth/providers", { params: { query: { catname } } }),
);

console.log(
  JSON.stringify({
    health: health.status,
    cats: cats.cats.map((c) => c.name),
    total_interactions: warehouse.total_interactions,
    denied: { status: denied.response.status, error: deniedError?.error ?? null },
    chat: { conversation_id: reply.conversation_id, model: reply.model, message: reply.message },
    stream: {
      content_type: streamed.response.headers.get("Content-Type"),
      events: events.map((e) => e.event),
      deltas,
      done: done ?? null,
    },
    conversations: conversations.conversations.map((c) => c.id),
    providers: providers.providers.map((p) => p.name),
  }),
);

// parseEvents splits a Server-Sent Events body into its events.
function parseEvents(body: string): { event: string; data: string }[] {
  const out: { event: string; data: string }[] = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) out.push({ event, data: data.join("\n") });
  }
  return out;
}
