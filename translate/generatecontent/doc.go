// Package generatecontent is the content-generation dialect
// (POST /v1beta/models/{model}:generateContent and :streamGenerateContent),
// in both roles: Client decodes what clients send and renders what they get
// back; Upstream builds requests for a content-generation service and reads
// its replies, streams and errors.
//
// # Wire form
//
// Requests are read in both spellings (inline_data and inlineData: the
// member names match ignoring case and underscores) and with contents,
// parts and tools given as a single object as well as an array; enum words
// are read in any case. Parley writes camelCase and arrays; a body already
// in that form goes on as it came to an upstream of this dialect (the
// same-dialect fast path, forward.go). The model comes
// from the path (models/ is optional), the stream flag from the action, and
// the key from ?key= or x-goog-api-key (the server reads those). Toward an
// upstream the key goes in x-goog-api-key, never in the URL, and a stream
// is asked for with ?alt=sse. Members Parley does not model travel in the
// canonical extension bag and go back only toward this dialect.
//
// # Mapping rules
//
//   - Usage. promptTokenCount counts cached tokens, as canonical input
//     does; cachedContentTokenCount is the cache read. candidatesTokenCount
//     leaves thoughts out: canonical output = candidatesTokenCount +
//     thoughtsTokenCount, and back. toolUsePromptTokenCount is the tool-use
//     input; per-modality details map one to one.
//   - Finish reasons. STOP, MAX_TOKENS, SAFETY, RECITATION, LANGUAGE,
//     OTHER, BLOCKLIST, PROHIBITED_CONTENT, SPII, MALFORMED_FUNCTION_CALL,
//     IMAGE_SAFETY, UNEXPECTED_TOOL_CALL and TOO_MANY_TOOL_CALLS map one to
//     one; any newer word becomes OTHER and is kept for this dialect. STOP,
//     OTHER or no reason on a turn with function calls is a tool-use finish
//     (translate.ToolUseFinish); a blocked prompt reaches clients of
//     dialects without prompt feedback as a refusal. Back: tool use and
//     stop sequences are STOP, a refusal is SAFETY, a paused turn or an
//     exhausted context window is MAX_TOKENS.
//   - Call ids. The service may omit them. Parley gives a call without an id
//     an id stable for its reply (call_<responseId>_<candidate>_<part>) or,
//     in a client's history, for its place (call_<turn>_<part>), and gives a
//     function response without an id the id of the first unanswered call
//     of the same name in the model turn before it, else the first
//     unanswered call. Made-up ids are never shown to a client of this
//     dialect, nor sent to an upstream of it; every other id is, on the
//     call and on its response, whatever dialect the client spoke: Gemini
//     3 models give every call an id and match each response to its call
//     by it (a response whose id matches no call is refused), and earlier
//     models ignore ids.
//   - Tool results. A function response's response object is the result's
//     text, as JSON. Toward an upstream, a result that is one JSON object is
//     sent as the response; any other result is {"output": text}, or
//     {"error": text} for a failed call (the keys the service's SDKs use).
//     The function name comes from the call, else from the result. Media
//     in a function response (its parts, which Gemini 3 models read) are
//     the result's media. Toward a Gemini 3 model (or later), a result's
//     images, PDFs and plain text go inside its function response, each
//     named by a display name the response's text gives. Toward earlier
//     models, which read no media there, a client of another dialect's
//     images and documents in a result follow the turn's function
//     responses as parts of their own, each after a text naming its call,
//     as the service's own clients send them (the Gemini CLI does), and
//     the response says where they went; media that can go neither way is
//     described in the response instead.
//   - Reasoning. A thought (text with thought: true) is a reasoning part;
//     a thoughtSignature on any part is that part's signature. Thoughts in a
//     row in a client's history (a stream replayed part by part) are joined
//     into one reasoning part signed by the signature that ends the run
//     (or that starts it, on a part of its own). The SDKs send a streamed
//     empty text part back without its text: a part with only a signature
//     (and thought flag) is that empty text, signed; an empty model part
//     ({}) carries nothing and is passed over.
//     Toward an upstream, signatures and thoughts go only when this
//     dialect's service made them (the same upstream when known); the first
//     function call of each step of the current turn that has no such
//     signature carries the documented placeholder
//     skip_thought_signature_validator, without which thinking models reject
//     history they did not write. Toward a client, a signature made by
//     another dialect is sealed with its origin (translate.SealOpaque) and
//     still decodes as base64; reasoning with only summaries shows them as
//     the thought text, and encrypted reasoning content is sealed into the
//     thought's signature.
//   - Thinking settings. thinkingBudget 0 disables thinking, -1 is adaptive,
//     any other budget enables it; thinkingLevel is the effort level.
//     Toward an upstream for a client of another dialect, an effort level
//     becomes its budget (translate.BudgetForEffort), effort none a budget of
//     0, and thoughts are included unless the client said otherwise.
//   - Schemas. Parameters and response schemas in the dialect's Schema
//     form become JSON Schema and back; the conversion and its list of
//     dropped keywords are in schema.go. A schema given as JSON Schema
//     (parametersJsonSchema, responseJsonSchema) passes through unchanged
//     for this dialect. A client of another dialect's JSON Schema goes in
//     the Schema form when that form holds all of it, else as JSON Schema,
//     with what the service's rules remove listed in Outgoing.Dropped
//     (schema_form.go).
//   - System prompt. systemInstruction is the request's instructions; a
//     client of another dialect's opening system turns join it, and later
//     system turns keep their place as user turns wrapped in
//     <system-reminder> tags. For clients of other dialects conversations
//     are normalised as translate.NormaliseTurns says.
//   - Media. Inline data is inlineData; a URI is fileData, with the MIME
//     type guessed from the file name when unknown. Parley fetches nothing.
//     A file id that is not one of this service's files, audio in tool
//     results, file search, and bash or text-editor tools are
//     UnsupportedErrors; more than 5 stop sequences too. Tool choice
//     REQUIRED is ANY; a named tool is ANY with an allow-list of one.
//   - Streams. Each chunk is a whole reply object: text and thoughts
//     continue the open part, a part that only carries a signature signs
//     it, every other part is whole. The stream ends with the body; it ended
//     well when every candidate gave its finishReason or the prompt was
//     blocked. Toward a client Parley writes a chunk per piece of text or
//     thought, a function call whole once its arguments are complete, and a
//     last chunk with the finish reasons, safety ratings, citations,
//     grounding and usage. As the service does (recorded streams in
//     testdata), every chunk carries the usage known by then, and the last
//     chunk of a candidate that wrote content has content too (an empty
//     text part), so that libraries that skip candidates without content
//     (LangChain) still read the final usage; an upstream that reports
//     usage only at the end gives it to the last chunk, with no estimate
//     before. It writes no comments or event names, which the SDKs reject,
//     so keep-alives are silent.
//   - Errors. {"error": {code, message, status, details}} with the status
//     names of google.rpc (413 is PAYLOAD_TOO_LARGE, as the spec says);
//     field violations travel as a BadRequest detail and retry delays as a
//     RetryInfo detail. In a stream an error is a chunk holding the error
//     object; an error that arrives before anything else is still sent as
//     such a chunk. Errors inside a reply carry retry advice by their code.
//   - Cache hints. The service caches by cachedContent, not per block: the
//     hints of a client of another dialect are not sent, and the upstream
//     request lists each in Outgoing.Dropped for the gateway to report.
//   - Counting. A :countTokens body holds contents or a whole
//     generateContentRequest (which names its model again), never both.
//     Toward an upstream Parley sends a generateContentRequest, so that the
//     system instruction and tools are counted; the reply's totalTokens,
//     cachedContentTokenCount and per-modality details map one to one.
//   - Candidates. A candidate without an index member is named by its
//     place in the list. Citations are read under citationSources and
//     under the Vertex AI spelling citations, and written as
//     citationSources, which is what the SDKs read from this dialect.
//   - Streamed call arguments. Vertex AI's function calls whose arguments
//     come in pieces (functionCall.partialArgs by JSON path, with
//     willContinue; asked for with streamFunctionCallArguments) are
//     assembled and given to every client as whole calls
//     (partial_args.go).
//   - Not carried. Members of usageMetadata a stream adds beyond the
//     counts are kept only in whole replies.
package generatecontent
