// Package messages is the messages-style dialect (POST /v1/messages), in
// both roles: Client decodes what clients send and renders what they get
// back; Upstream builds requests for a messages-style service and reads its
// replies, streams and errors.
//
// # Wire form
//
// The wire types model the members Parley maps. Every other member (of the
// request, a message, a block, a tool, a reply, its usage) lands in the
// canonical extension bag and is written back only toward this dialect, so
// that a messages client talking to a messages upstream loses nothing,
// including members newer than Parley. Headers are read in both spellings:
// provider-version / anthropic-version, provider-beta / anthropic-beta
// (repeated or comma-separated); keys come from x-api-key or from
// Authorization: Bearer (the server reads those). Toward an upstream Parley
// sends x-api-key, anthropic-version (the client's, else 2023-06-01) and the
// client's beta features, plus computer-use-2025-01-24 when a client of
// another dialect offers the computer tool.
//
// # Mapping rules
//
//   - Usage. This dialect's input_tokens leave out cached tokens;
//     canonical input counts them: canonical input = input_tokens +
//     cache_read_input_tokens + cache_creation_input_tokens, and back.
//     output_tokens_details.thinking_tokens is the reasoning count. The
//     stream's message_start always carries input_tokens (0 when the
//     upstream reports usage only at the end), and message_delta carries the
//     final counts, never zero when the upstream reported some.
//   - Stop reasons. end_turn, max_tokens, stop_sequence, tool_use,
//     pause_turn, refusal and model_context_window_exceeded map one to one.
//     A turn that ends in tool calls is tool_use whatever the upstream said.
//     Safety stops of other services (SAFETY, RECITATION, BLOCKLIST,
//     PROHIBITED_CONTENT, SPII, IMAGE_SAFETY) become refusal; reasons with
//     no counterpart end the turn (end_turn). An unknown stop reason of an
//     upstream becomes OTHER, its word kept in finish_message.
//   - Reasoning. A thinking block is a reasoning part whose signature is
//     the part's signature; redacted_thinking is redacted reasoning whose
//     data is the encrypted content. Toward an upstream, reasoning goes only
//     when its signature (or data) was made by a service of this dialect,
//     and by the same upstream when that is known; other reasoning is left
//     out, since the service rejects signatures it did not issue. Toward a
//     client, a signature made by another dialect is sealed with its origin
//     (translate.SealOpaque); a signature on a part this dialect cannot sign
//     (a thought signature on a tool call or a text) travels in an empty
//     thinking block next to the part and returns to it when the client
//     replays the turn. Reasoning of another dialect that has only
//     summaries shows its summaries as the thinking text, and its encrypted
//     content as the (sealed) signature. Reasoning its upstream did not sign
//     at all (a chat service's reasoning text) still gets a signature, as
//     the dialect requires one on every thinking block and clients must send
//     it back: translate.Unsigned, a seal that comes back as reasoning with
//     no signature.
//   - Thinking settings. From a client of this dialect, thinking and
//     output_config.effort pass through as given. From other dialects: an
//     effort level becomes a budget (translate.BudgetForEffort), effort none
//     disables thinking, the budget is at least 1024 and max_tokens is raised
//     above it (thinking counts inside max_tokens), and temperature, top_k
//     and a top_p below 0.95 are dropped while thinking is on (the service
//     rejects them), each listed in Outgoing.Dropped.
//   - System prompt. Request instructions become system. Toward an
//     upstream, a client of another dialect's system and developer turns
//     that open the conversation join the system prompt; a system turn
//     later in the conversation keeps its place as a user turn wrapped in
//     <system-reminder> tags. A client of this dialect keeps its system
//     turns (role system) where it put them.
//   - Normalisation toward an upstream, for clients of other dialects:
//     empty text blocks are dropped, turns that become empty are dropped,
//     tool turns become user turns, consecutive turns of the same role are
//     merged, and every tool_result moves to the front of the user turn right
//     after the assistant turn that made its call. A client of this dialect
//     gets its turns as it sent them.
//   - Ranges and defaults. temperature is clamped to [0, 1] (other dialects
//     allow up to 2); max_tokens, required here, defaults to 8192; a request
//     for more than one candidate is an UnsupportedError, as are audio and
//     video, images other than JPEG, PNG, GIF and WebP, documents other than
//     PDF and plain text, URLs that are not http(s), file search, and item
//     references. Seeds, penalties, log-probabilities, logit bias and the
//     JSON-object and enum response formats have no counterpart and are not
//     sent; a JSON-schema response format becomes output_config.format.
//   - Tools. A function is a custom tool (input_schema defaults to an empty
//     object schema). Computer, bash, text editor, web search, web fetch and
//     code execution map to this dialect's typed tools, keeping the client's
//     dated version when it named one of this dialect; a web search's
//     dynamic-retrieval threshold has no counterpart and is listed in
//     Outgoing.Dropped. A tool-choice allow-list of one name forces that
//     tool; a longer list offers only the listed functions. Tool-call
//     arguments that are not a JSON object fail toward an upstream and
//     reach a client as {"_raw_arguments": "..."}. A tool-call id with
//     characters outside [a-zA-Z0-9_-], which the service refuses (other
//     services make ids such as "functions.Bash:0"), goes out to clients
//     and upstreams as "toolu_prly_" and its base64url, and comes back from
//     a client as the original, so its maker gets its own id back (ids.go).
//   - Schemas from other dialects. Tool and output schemas lose
//     propertyOrdering; a structured-output schema, or a strict tool's,
//     is held to the subset the service enforces, as the official SDKs
//     adjust it (schema.go lists it): other keywords move into the
//     description, objects get additionalProperties: false.
//   - Counting. /v1/messages/count_tokens is a request without
//     max_tokens; the count is {"input_tokens": n}, cached tokens included.
//   - Settings with no field here (seed, penalties, log-probabilities,
//     logit bias, media resolution, speech, verbosity, safety settings,
//     cached content, a schema-less JSON or enum answer format) are not
//     sent; the upstream request lists them in
//     Outgoing.Dropped for the gateway to report.
//   - Prompt feedback. A prompt the upstream blocked ends the turn with
//     stop_reason refusal.
//   - Server tools. server_tool_use and the *_tool_result blocks are hosted
//     tool calls and results; they go back only toward this dialect.
//     Code another service ran (executable code and its result) becomes text.
//   - Errors. Each HTTP status has its error type (400
//     invalid_request_error, 401 authentication_error, 402 billing_error,
//     403 permission_error, 404 not_found_error, 409 conflict_error, 413
//     request_too_large, 429 rate_limit_error, 500 api_error, 503 and 529
//     overloaded_error, 504 timeout_error); the upstream's status is kept,
//     and an upstream of this dialect keeps its own type. In a stream, an
//     error is the error event, after which the stream ends; it may come
//     first, before message_start, when an upstream fails at once.
//   - Stream closing. message_delta's delta and usage members the canonical
//     model has no field for (stop_details, per-iteration usage) ride with
//     the finish and come back on the same dialect.
package messages
