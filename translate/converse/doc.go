// Package converse is Amazon Bedrock's Converse API (POST
// /model/{modelId}/converse and /converse-stream), as an upstream only:
// Upstream builds requests for the service and reads its replies, event
// streams, errors and token counts. Clients do not speak this dialect to
// Parley, so the descriptor has no client side and no routes.
//
// # Wire form
//
// Member names and shapes are the service's API reference and the AWS SDK
// for Go's (service/bedrockruntime: its schemas name every member; the
// tests send the same content through the SDK and compare). A request is
// JSON with Content-Type and Accept application/json and no credentials:
// the transport signs it (SigV4) or adds the account's key, so
// translate.Target.APIKey is never read here. The model id (a model, an
// inference profile or an ARN) is one path segment, escaped as the SDKs
// escape it (":" and "/" included), since the request is signed as sent.
// A stream reply is AWS event-stream messages, not server-sent events:
// OpenFrames reads them (translate/eventstream) into events whose type is
// the :event-type header and whose data is the JSON payload; exception
// messages end the stream with the service's error there, not here.
// Members of a reply Parley does not model (trace, performanceConfig, the
// "p" padding of stream events, newer members) are ignored: there is no
// client of this dialect to give them back to.
//
// # Mapping rules
//
//   - Turns. The service requires user and assistant turns to alternate
//     and refuses blank text. A conversation is normalised as the messages
//     dialect normalises one for an upstream (translate.NormaliseTurns):
//     empty text dropped, tool turns as user turns, every tool result at
//     the front of the user turn after its call, same-role turns merged;
//     then merged again where a turn lost all its blocks (another
//     service's reasoning). A refusal is sent as text; code another
//     service ran becomes text; another service's hosted tool calls and
//     results are left out. Whether a conversation starts with a user turn
//     is left to the service, which says so itself.
//   - System prompt. Request instructions, then the system and developer
//     turns that open the conversation, are system text blocks (empty ones
//     left out, as the service refuses them); a system turn later in the
//     conversation keeps its place as a user turn wrapped in
//     <system-reminder> tags. A non-text instruction is an UnsupportedError.
//   - Cache breakpoints. A part, instruction or tool that ends a cacheable
//     prefix is followed by a cachePoint block ({"type":"default"}); a
//     lifetime over five minutes asks for ttl "1h", one of five minutes or
//     less for "5m", none leaves the service's default.
//   - Media. Images (PNG, JPEG, GIF, WebP), documents (PDF, CSV, DOC,
//     DOCX, XLS, XLSX, HTML, plain text, Markdown) and videos go inline as
//     bytes, or from S3 when the URI is s3://; the format comes from the
//     MIME type, else from the file name's extension. The service fetches
//     no other URL and has no file store, and Parley fetches nothing: an
//     http(s) URL or a file id is an UnsupportedError naming the field, as
//     are audio and other formats. A document needs a name, unique in the
//     request, of letters, digits, single spaces, hyphens, parentheses and
//     square brackets: its title (else its file name without the
//     extension) with other characters as spaces, "document" when nothing
//     is left, and " (2)", " (3)" ... for repeats; its context is kept.
//   - Tools. A function is a toolSpec: its schema as inputSchema.json (an
//     empty object schema when it has none), strict when it asks; a
//     function of a group goes by its flat name (translate.FlatToolName).
//     The service runs no tool itself: another service's hosted tools
//     (web search, code execution, file search, URL context) and tools
//     another dialect kept whole are left out and listed in
//     Outgoing.Dropped, so that an agent that always declares them (the
//     Codex CLI's web_search) is still served; the built-in tools a
//     client runs (computer use, bash, a text editor) are an
//     UnsupportedError, since their calls would be the client's to
//     answer. Tool
//     choice auto is {"auto":{}}, required {"any":{}} (a tool when the
//     allow-list names one), a named tool {"tool":{"name"}}; an allow-list
//     offers only the listed functions. The service has no "none": the
//     tools are left out, unless the conversation already holds tool calls
//     or results, which the service refuses without a tool configuration
//     (the documented rule of its tool use); then they are offered with no
//     choice and tool_choice is listed in Outgoing.Dropped. A conversation
//     with calls but no tools declared (a client that dropped them) gets a
//     specification with an empty schema for each tool it calls, for the
//     same reason. Parallel calls cannot be turned off
//     (tool_choice.parallel_calls is dropped). A call's arguments must be a
//     JSON object (the input member is one); others are an
//     UnsupportedError. A tool result holds its text, images and
//     documents, with status "error" for a failed call; an empty result
//     has no content blocks (the member is required, its length is not
//     documented; Parley sends it empty rather than invent text).
//   - Tool-use ids. The service takes 1 to 64 of [a-zA-Z0-9_-]. An id of
//     another service that breaks the rule goes out as "tooluse_prly_" and
//     32 hex digits of its SHA-256, the same for the call and its result;
//     the canonical id stays the original (nothing maps it back: the
//     service's own ids are valid and come back unchanged).
//   - Reasoning. A reasoningContent block is a reasoning part: its
//     reasoningText's signature is the part's signature, redactedContent
//     (bytes) is redacted reasoning whose encrypted content is their
//     base64. Both are stamped with the upstream and model that made them
//     (translate.Stamp). Toward the service, reasoning goes back only when
//     its signature (or redacted content) was made by a service of this
//     dialect, and by the same upstream when that is known
//     (translate.SendableTo): Bedrock, like the messages service behind it,
//     refuses signatures it did not make, and reasoning nobody signed
//     cannot be vouched for; other reasoning is left out, as the messages
//     dialect leaves it out. A client of another dialect gets the
//     signature sealed with its origin and sends it back sealed, so it
//     finds its way back here.
//   - Thinking settings. The Converse API has no field for them; each
//     model family takes its own in additionalModelRequestFields. For
//     Anthropic models (a model id, profile or ARN that names
//     "anthropic." or "claude") Parley applies the messages dialect's rule
//     toward an upstream: {"thinking":{"type":"enabled","budget_tokens"}}
//     with the budget given, or the budget of an effort level
//     (translate.BudgetForEffort), at least 1024; effort none or a zero
//     budget is {"type":"disabled"}; adaptive with neither is
//     {"type":"adaptive"}. maxTokens is raised above the budget (thinking
//     counts inside it; budget + 8192 when no limit was set), and
//     temperature and a topP below 0.95 are dropped while thinking (the
//     models refuse them), as is top_k; top_k otherwise goes as the
//     model's top_k field. For other models (and an application inference
//     profile's ARN, which does not name its model) the reasoning settings
//     and top_k are listed in Outgoing.Dropped. outputConfig.effort is not
//     used: it is a newer Anthropic setting, and the messages rule maps
//     effort to a budget.
//   - Sampling. maxTokens, temperature (clamped to [0, 1]; other dialects
//     go to 2, whose upper half means "more random", which 1 is here),
//     topP and the non-empty stop sequences (the service refuses empty
//     ones) go in inferenceConfig. More than one candidate is an
//     UnsupportedError.
//   - Structured output. A JSON-schema response format is
//     outputConfig.textFormat {"type":"json_schema","structure":
//     {"jsonSchema":{"schema","name","description"}}}, the schema as JSON
//     text, as the service takes it. The JSON-object and enum formats have
//     no form (response_format is dropped).
//   - Other settings. Service tier priority, flex and default (and
//     standard-only) are serviceTier.type; scale is dropped; auto is the
//     service's default and sends nothing. Client metadata is
//     requestMetadata when it fits (at most 16 pairs of the characters the
//     service allows), else dropped whole. Seeds, penalties,
//     log-probabilities, logit bias, media resolution, speech, civic
//     answers, verbosity, safety settings, cached content and the end
//     user's id have no field and are listed in Outgoing.Dropped.
//   - Replies. The reply names neither itself nor its model: a response
//     has the target's model and no id, which the gateway gives it, as for
//     every upstream that names none. Text, tool calls (the input object
//     as the arguments' JSON text), reasoning and citationsContent (its
//     text with the citations as annotations: web pages, and character,
//     page or chunk spans of the request's documents) are read; other
//     blocks (an image the model made) are left out.
//   - Stop reasons. end_turn, tool_use, max_tokens, stop_sequence,
//     malformed_tool_use and model_context_window_exceeded map one to one;
//     guardrail_intervened and content_filtered are SAFETY (a filter
//     stopped the output); malformed_model_output and reasons newer than
//     Parley are OTHER with the word in finish_message. A turn that ends
//     in tool calls is TOOL_USE whatever the service said. The service
//     does not say which stop sequence matched; an Anthropic model's
//     "stop_sequence" response field (whole replies) or
//     "delta"."stop_sequence" (streams) is read when it is there.
//   - Usage. The service's inputTokens leave out the tokens read from and
//     written to the prompt cache (totalTokens is their sum with the
//     output and both cache counts), as the messages dialect's
//     input_tokens do; canonical input counts them: canonical input =
//     inputTokens + cacheReadInputTokens + cacheWriteInputTokens.
//     cacheDetails splits the cache writes by lifetime.
//   - Streams. messageStart, then per block an optional contentBlockStart
//     (only a tool call has one: its id and name; a text or reasoning
//     block begins with its first delta), deltas and contentBlockStop,
//     then messageStop with the stop reason and metadata with the usage.
//     Indices count up from 0 and blocks never interleave; anything out of
//     order is the upstream's protocol error. The finish goes out at
//     messageStop, the usage at metadata, and the stream is done when both
//     have come (in either order), or when the body ends after
//     messageStop; a body that ends before messageStop ended early
//     (translate.EndedEarly, retried before the first byte). A tool call
//     that streamed no input has arguments "{}"; a block that said
//     nothing is an empty text part. Unknown event types are ignored.
//   - Errors. translate/eventstream reads them: the exception named by
//     X-Amzn-ErrorType (or the body's __type or code), its message from
//     the body, the upstream's status kept; throttling and quota
//     exceptions are RESOURCE_EXHAUSTED and retryable.
//   - Counting. POST /model/{modelId}/count-tokens with the request's
//     messages, system prompt, tool configuration and model request fields
//     under input.converse, as the Converse request would carry them; the
//     reply's inputTokens is the count.
package converse
