// Package chatcompletions is the chat-completions dialect
// (POST /v1/chat/completions), in both roles: Client decodes what clients
// send and renders what they get back; Upstream builds requests for a
// chat-completions service and reads its replies, streams and errors.
//
// # Wire form
//
// The wire types model the members Parley maps. Every other member (of the
// request, a message, a content part, a tool, a reply, its usage) lands in
// the canonical extension bag and is written back only toward this
// dialect, so that a chat client talking to a chat upstream loses nothing.
// Keys: clients send Authorization: Bearer, and so does Parley upstream.
// Errors of both OpenAI-family dialects share translate/internal/openai.
//
// # Mapping rules
//
//   - System and developer messages keep their role and their place as
//     canonical system and developer turns; upstreams of other dialects fold
//     the leading ones into their system prompt (instructions) and keep the
//     later ones in place, so none is lost. Canonical instructions from
//     other dialects become one leading system message.
//   - Content: a string is one text part; parts are text, image_url (a data
//     URL becomes inline bytes, any other URL stays a URL and is never
//     fetched), input_audio (wav or mp3, inline) and file (file_data as a
//     data URL, or file_id). Toward this dialect a text-only turn from
//     another dialect is a string; images by file id, audio by URL and
//     video are UnsupportedErrors.
//   - Tools. function tools map to canonical functions; tool_choice
//     none/auto/required, a named function, and allowed_tools map to the
//     canonical choice and allow-list; parallel_tool_calls is the choice's
//     parallel flag. web_search_options is the canonical web search tool
//     (allowed domains have no place and are listed in Outgoing.Dropped).
//     Other built-in tools are UnsupportedErrors. Tool types this dialect
//     adds later (custom tools) pass through to an upstream of this
//     dialect only.
//   - Tool turns. An assistant message's tool_calls are call parts; a tool
//     message is a tool turn holding one result, named from the call it
//     answers. Toward this dialect, tool results in another dialect's user
//     turn become tool messages placed first, then the rest of the turn;
//     tool messages hold text only, so a result's images, audio and files
//     move to a user message after the tool messages (first in the rest of
//     the turn), each labelled with its call, and the tool message says
//     so; what that message cannot hold either (video, an image by file
//     id) is described in the tool message. An error result is prefixed
//     "Error: ". Consecutive assistant turns of a client of another
//     dialect (the responses dialect's reasoning, message and call items)
//     become one assistant message, its reasoning beside its calls.
//   - Finish reasons. stop, length, tool_calls (and the legacy
//     function_call), content_filter map to STOP, MAX_TOKENS, TOOL_USE and
//     SAFETY. Toward a client: a turn ending in tool calls is tool_calls
//     whatever the upstream said; every safety or refusal stop is
//     content_filter; token and context limits are length; anything else
//     is stop, except an unknown word of an upstream of this dialect, which
//     is passed on.
//   - Reasoning. reasoning_content (and reasoning, as some servers spell it
//     in streams) is reasoning text. Toward a client, reasoning parts of any
//     upstream show as reasoning_content (summaries when there is no
//     text). The dialect has no place for signatures or encrypted
//     reasoning: they are not shown. Reasoning goes to an upstream of this
//     dialect from a client of this dialect, as the client sent it; from
//     a client of another dialect only when this very upstream wrote it,
//     and only on an assistant turn that calls tools, where thinking
//     services (DeepSeek's) require it back and elsewhere ignore or refuse
//     it: reasoning decoded from an upstream carries the maker's stamp, an
//     empty signature naming the upstream, which other clients hold sealed
//     (reasoning.go). A tool round trip through this dialect to an upstream
//     that signs its reasoning carries no reasoning back. reasoning_effort is the canonical
//     effort; a budget from another dialect becomes the nearest effort
//     (translate.EffortForBudget), reasoning switched off is "none". A
//     client that asks for an effort other than none reads reasoning back,
//     as thinking services of this dialect send it, so the request also
//     asks to see the thoughts (include_thoughts): a responses upstream is
//     asked for its summaries, which would otherwise not come.
//   - Structured output. response_format text, json_object and json_schema
//     (name, description, schema, strict) map both ways; the enum format of
//     another dialect has no form here and is listed in Outgoing.Dropped. A
//     schema-bearing format with no name is named "response".
//   - Settings. max_completion_tokens (or the legacy max_tokens, whose
//     spelling is kept for a client of this dialect), n, stop (string or
//     array, at most 4), seed, logprobs and top_logprobs, penalties,
//     logit_bias, temperature (0 to 2), top_p, verbosity, modalities and
//     audio, user, metadata (16 pairs, keys up to 64 characters, values up
//     to 512), service_tier. top_k, media resolution, safety settings,
//     cached content, reasoning summaries, truncation, and
//     previous_response_id have no place here and are listed in
//     Outgoing.Dropped; a responses client's store is Parley's business,
//     not the upstream's, and is not sent.
//   - Usage. prompt_tokens includes cached tokens and completion_tokens
//     includes reasoning tokens, as canonical counts do; cached_tokens,
//     audio tokens, reasoning_tokens and prediction tokens map to their
//     canonical fields.
//   - Streams. Toward an upstream of this dialect Parley always asks for
//     stream_options.include_usage, so that it can count tokens; the
//     client gets the usage chunk only when it asked. Tool-call deltas
//     arrive by index; a call that continues after a later call began is a
//     protocol error, as is a stream that stops before [DONE] with a choice
//     unfinished (a stream whose every choice finished may omit [DONE], as
//     some compatible servers do). A chunk holding "error" ends the stream
//     with that error, in both directions.
//   - Errors. {"error": {"message", "type", "param", "code"}}, with the
//     real service's types and codes per status (401 is an
//     invalid_request_error with code invalid_api_key, 429 has type
//     "requests" and code rate_limit_exceeded); param names the field at
//     fault, spelled as the service spells it (messages.[2].content).
package chatcompletions
