// Calls catsrv's OpenAI-compatible routes with the official openai
// package and prints what it got as JSON (apps/catsrv TestOpenAIJSClient).
// Usage: node src/main.mjs <base URL> <token> <legacy CAT> <agent CAT>
import OpenAI from "openai";

const [base, token, legacy, agent] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: token, maxRetries: 0 });

async function plain(model, messages, conversation) {
  const headers = conversation ? { "X-Conversation-Id": conversation } : undefined;
  const { data, response } = await client.chat.completions.create({ model, messages }, { headers }).withResponse();
  return {
    object: data.object,
    content: data.choices[0].message.content,
    finish_reason: data.choices[0].finish_reason,
    total_tokens: data.usage.total_tokens,
    sources: (data.sources ?? []).map((s) => s.id),
    conversation: response.headers.get("x-conversation-id"),
  };
}

async function streamed(model, messages, conversation) {
  const headers = conversation ? { "X-Conversation-Id": conversation } : undefined;
  const { data: stream, response } = await client.chat.completions
    .create({ model, messages, stream: true, stream_options: { include_usage: true } }, { headers })
    .withResponse();
  let content = "";
  let chunks = 0;
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.object !== "chat.completion.chunk") throw new Error(`chunk object ${chunk.object}`);
    if (chunk.choices.length === 0) usage = chunk.usage.total_tokens;
    for (const c of chunk.choices) {
      content += c.delta.content ?? "";
      finish = c.finish_reason ?? finish;
    }
  }
  return { content, chunks, finish_reason: finish, total_tokens: usage, conversation: response.headers.get("x-conversation-id") };
}

async function failure(call) {
  try {
    await call();
    return { status: 0 };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status, type: err.type ?? err.error?.type ?? null, message: err.message };
  }
}

const models = (await client.models.list()).data.map((m) => ({ id: m.id, object: m.object, owned_by: m.owned_by }));
const question = [{ role: "system", content: "Be brief." }, { role: "user", content: "How do I reset my password?" }];
const legacyPlain = await plain(legacy, question);
const legacyStream = await streamed(legacy, question, legacyPlain.conversation);
const history = [
  { role: "user", content: "first" },
  { role: "assistant", content: "premier" },
  { role: "user", content: "second" },
];
const agentPlain = await plain(agent, history);
const agentStream = await streamed(agent, history);
const unknown = await failure(() => client.chat.completions.create({ model: "nosuchcat", messages: question }));
const anonymous = await failure(() => new OpenAI({ baseURL: `${base}/v1`, apiKey: "not-a-token", maxRetries: 0 }).models.list());

console.log(JSON.stringify({ models, legacyPlain, legacyStream, agentPlain, agentStream, unknown, anonymous }));
