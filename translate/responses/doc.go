// Package responses is the responses-style dialect (POST /v1/responses and
// POST /v1/responses/input_tokens), in both roles: Client decodes what
// clients send and renders what they get back; Upstream builds requests
// for a responses-style service and reads its replies, streams and errors.
//
// # Wire form
//
// The wire types model the members Parley maps; every other member (of the
// request, an item, a content part, a tool, the response object, its
// usage) lands in the canonical extension bag and is written back only
// toward this dialect. Keys: clients send Authorization: Bearer, and so
// does Parley upstream. Errors are shared with the chat-completions
// dialect (translate/internal/openai).
//
// # Mapping rules
//
//   - Items. Each input or output item is one canonical turn, so the order
//     of items is kept exactly: a message item is a turn of its role
//     (system and developer keep theirs), a function_call, reasoning,
//     computer_call or hosted search call an assistant turn, a
//     function_call_output or computer_call_output a tool turn. Parts of
//     output items carry the item's id and status. Encoders of other
//     dialects merge consecutive turns of a role. input as a string is one
//     user turn; instructions are canonical instructions (upstreams of
//     other dialects make them their system prompt); previous_response_id,
//     store and truncation are carried as given (the store behind them is
//     the gateway's).
//   - Content. input_text and output_text are text (annotations
//     url_citation, file_citation and file_path map to canonical
//     annotations, others travel raw), refusal is a refusal, input_image is
//     an image by URL, data URL (inline bytes) or file id with its detail,
//     input_file a file by data, id or URL. URLs are passed on, never
//     fetched. Audio and video have no input form here: UnsupportedError.
//   - Tool turns finish as tool use: a response with function_call items
//     finishes TOOL_USE, and toward a client a turn ending in calls is a
//     function_call item with status completed whatever the upstream said.
//     A finish reason that ends early (token limit, safety) makes the
//     response incomplete with incomplete_details.reason max_output_tokens
//     or content_filter.
//   - Reasoning. A reasoning item is a reasoning part: summaries are
//     summaries, reasoning_text content is text, encrypted_content is the
//     opaque encrypted content, stamped with its origin. Toward an upstream,
//     reasoning goes only to the service of this dialect that made it (the
//     same upstream when known) and only with its id; other reasoning is
//     left out. Toward a client, reasoning of another service becomes a
//     reasoning item whose summary is its text and whose encrypted_content
//     is its signature sealed with its origin (translate.SealSignature); a
//     signature on a part that is not reasoning travels in a reasoning item
//     of its own before the part (translate.SealCarrierNext). When the
//     client sends those items back, the seals restore the signatures for
//     their maker, and no other upstream sees them.
//   - Reasoning settings. reasoning.effort and summary (or the deprecated
//     generate_summary, whose spelling is kept) map to the canonical
//     effort and summary. From other dialects: a budget becomes the nearest
//     effort, reasoning switched off is effort none, a client that asked
//     to see thoughts gets summary auto; and because such clients send
//     their whole history back, Parley asks for store false and
//     include reasoning.encrypted_content.
//   - Structured output. text.format text, json_object and json_schema
//     (name of letters, digits, _ and -, at most 64; schema object;
//     description; strict) map both ways; the enum format of another
//     dialect has no form here and is listed in Outgoing.Dropped.
//   - Tools. function (strict as given; a function from another dialect is
//     sent with strict false, since its schema rarely meets strict mode),
//     file_search (vector stores, comparison and compound filters,
//     max_num_results 1 to 50, ranking options with a threshold in 0..1),
//     web_search_preview and its dated variant (context size, approximate
//     location, domains), computer_use_preview (display and environment).
//     tool_choice none/auto/required, a named function, a hosted tool type,
//     and allowed_tools map to the canonical choice. A custom tool (free
//     text input, with a grammar or not: the Codex CLI's apply_patch) is a
//     function with one string parameter, input, for upstreams of other
//     dialects, its format in the parameter's description; its calls come
//     back as custom_tool_call items with that input (in a stream, as
//     custom_tool_call_input events once the call is whole), and a client's
//     custom_tool_call and custom_tool_call_output items go upstream as a
//     function call and its result (custom.go). A namespace tool's
//     functions and custom tools are functions of its group: other
//     dialects offer them by their flat names, and their calls come back
//     to the client with the namespace and the function's own name
//     (namespace.go). Other tools of types Parley does not model (Codex's
//     tool_search) pass through to an upstream of this dialect only; every
//     other upstream lists them in Outgoing.Dropped.
//     The response echoes the request's tools with the service's defaults
//     filled in (strict true, search_context_size medium, file search
//     ranking auto).
//   - Settings. max_output_tokens (at least 16, the service's bound; a
//     smaller limit from another dialect is raised to 16), temperature (0
//     to 2), top_p, top_logprobs, text.verbosity, metadata (16 pairs, keys
//     up to 64 characters, values up to 512), service_tier, user, include
//     (the service's values only). Stop sequences, seeds, penalties, logit
//     bias, top_k, speech, media resolution, safety settings and cached
//     content have no place here and are listed in Outgoing.Dropped;
//     several candidates are an UnsupportedError.
//   - Usage. input_tokens includes cached tokens and output_tokens includes
//     reasoning tokens, as canonical counts do; the details are always
//     rendered, as the service renders them.
//   - Streams. Toward a client every event has its event line, a type equal
//     to it, and a sequence_number from 0. Text and refusals stream inside
//     message items, calls as argument deltas, reasoning as summary deltas
//     (reasoning text of another service is summary 0); hosted searches
//     arrive whole (output_item.added then .done). A stream ends with
//     response.completed, or response.incomplete when the turn ended early;
//     a failure after response.created is response.failed with the
//     response's error, one before it an error event. From an upstream,
//     events out of order are protocol errors, and hosted tools' progress
//     events are skipped (their items arrive whole).
//   - Counting. /v1/responses/input_tokens takes a request body and answers
//     {"object": "response.input_tokens", "input_tokens": n}.
//   - WebSocket. GET /v1/responses upgraded carries response.create
//     events, each answered by its stream's events, one message each
//     (socket.go).
//   - Compaction. /v1/responses/compact takes a request body and answers
//     the user's messages and one compaction item whose content is the
//     summary the model wrote, sealed; a request whose input ends in a
//     compaction_trigger item is answered, whole or streamed, by a
//     response whose one output item is such a compaction item (the Codex
//     CLI's way when its provider is named OpenAI). The item sent back
//     becomes a user turn holding the summary (compaction.go,
//     translate/compaction.go).
//   - Errors. {"error": {"message", "type", "param", "code"}}, with the
//     real service's types and codes per status; a context overflow with
//     truncation disabled is a 400 with code context_length_exceeded.
package responses
