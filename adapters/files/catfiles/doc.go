// Package catfiles loads the per-CAT configuration (spec §2.6) from a
// directory of YAML files with github.com/knadh/koanf/v2, and serves it as a
// ports.CatDirectory.
//
// # Files
//
// One file per CAT, named <catname>.yaml or <catname>.yml; the file name is
// the CAT name (1-64 of a-z, 0-9, '-', '_', starting with a letter or digit).
// Other files and dotfiles in the directory are ignored. An empty directory
// configures no CAT. Every key is optional; an empty file gives a CAT with
// all the defaults below. Unknown keys, values of the wrong type and keys
// that look like secrets (any key with the word secret, api_key, apikey,
// password, passwd, token, client_secret, private_key or credentials, such
// as cat.agent.api_key or security.token; a count of tokens such as
// cat.agent.max_tokens is not one) are refused: secrets come from the
// environment only.
//
//	Key                                      Type             Default
//	cat.chat_mode                            string           legacy (legacy, agent or custom)
//	cat.agent.model                          string           "" (none)
//	cat.agent.instructions                   string           You are a helpful assistant.
//	cat.agent.base_url                       string           "" (OpenAI-compatible endpoint; none: agent mode unavailable; key from CATSRV_AGENT_API_KEY)
//	cat.agent.temperature                    number           0.7 (0 to 2)
//	cat.agent.max_tokens                     integer          1024 (1 to 1048576)
//	cat.agent.timeout_seconds                integer          60 (1 to 600)
//	cat.agent.max_steps                      integer          8 (model calls in one turn, 1 to 50)
//	cat.agent.tool_timeout_seconds           integer          30 (one tool call, 1 to 3600)
//	cat.agent.approval_timeout_seconds       integer          120 (an ask call's wait for a decision, 1 to 86400)
//	cat.agent.mcp_servers                    list of mappings [] (name, command + env or url + headers; files only, see docs/chat.md)
//	cat.agent.tools                          list of strings  [] ("<server>/<tool pattern> => allow|ask|deny", first match wins, none: allow)
//	cat.legacy.models                        list of strings  [greeting, intent, qa, default] (each one of these)
//	cat.legacy.knowledge_base                string           "" (path of the knowledge file, YAML or JSON Lines; none: qa and intent never answer)
//	cat.legacy.default_answer                string           Sorry, I do not know the answer to that yet.
//	cat.legacy.min_score                     number           0.5 (0 to 1: least relevance of a qa answer, BM25 relative to the entry's own question)
//	cat.custom.rules                         list of strings  [] ("<keyword|pattern|context> <argument> => <route>", see docs/chat.md)
//	cat.custom.default_route                 string           legacy (legacy, agent, greeting, intent, qa or default)
//	cat.max_message_bytes                    integer          32768 (1 to 65536)
//	cat.feedback.reasons                     list of strings  [] (reasons a rating may give, each 1 to 64 characters, at most 50; none: no reason accepted)
//	cat.budget.monthly_tokens                integer          0 (no budget; else the agent's tokens the CAT may use in a calendar month, UTC: past it agent turns answer 429)
//	cat.budget.user_daily_tokens             integer          0 (no budget; else the agent's tokens one user may use in a day, UTC: past it their agent turns answer 429)
//	cat.knowledge.documents                  string           "" (directory of Markdown, text and HTML documents, relative to this directory; re-read when it changes)
//	cat.knowledge.embeddings.base_url        string           "" (OpenAI-compatible /v1/embeddings endpoint; none: keyword search only; key from CATSRV_EMBEDDINGS_API_KEY)
//	cat.knowledge.embeddings.model           string           "" (required with base_url)
//	cat.knowledge.chunk_tokens               integer          500 (50 to 8000: tokens of a chunk, cl100k_base)
//	cat.knowledge.top_k                      integer          4 (1 to 50: passages a question gets)
//	cat.knowledge.min_score                  number           0.5 (0 to 1: least relevance of a passage used)
//	security.jwt.algorithm                   string           HS256 (the only one supported)
//	security.jwt.expiration_hours            integer          24 (1 to 720)
//	security.providers.provider_a.enabled    boolean          false
//	security.providers.provider_b.enabled    boolean          false
//	security.providers.provider_c.enabled    boolean          false
//	security.providers.<name>.enabled        boolean          false (a generic OpenID Connect provider of CATSRV_OIDC_PROVIDERS)
//	security.analytics.public                boolean          false (true lets anyone read the CAT's analytics without an admin token)
//	security.cors.allowed_origins            list of strings  [] (browser origins scheme://host[:port] allowed with credentials; the server allows the union over all CATs)
//	analytics.retention_days                 integer          0 (keep forever; else days of interactions kept, 1 to 36500: see docs/operations.md, Retention)
//	chat.retention_days                      integer          0 (keep forever; else days a conversation is kept after its last activity, 1 to 36500)
//
// Example demo.yaml:
//
//	cat:
//	  chat_mode: agent
//	  agent:
//	    model: gpt-4o
//	security:
//	  analytics:
//	    public: true
//
// # Overrides
//
// Load applies Overrides after the files: each sets one key for every CAT
// or for the CAT it names. catsrv's configuration loader
// (apps/catsrv/internal/config) makes them of environment variables; this
// package never reads the environment:
//
//	CATSRV_CAT__CAT__CHAT_MODE=agent                          (every CAT)
//	CATSRV_CAT__CAT__LEGACY__MODELS=greeting,qa               (lists are comma-separated)
//	CATSRV_CATS__DEMO__SECURITY__ANALYTICS__PUBLIC=true       (CAT demo)
//	CATSRV_CATS__MY_CAT__SECURITY__JWT__EXPIRATION_HOURS=12   (CAT my-cat: see EnvName)
//
// Precedence, lowest first: defaults, the file, overrides for every CAT,
// overrides for the CAT. An override of an unknown key, of a CAT that has
// no file (or fits two), or with a value of the wrong kind stops the load
// with an error naming its source.
package catfiles
