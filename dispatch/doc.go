// Package dispatch routes canonical requests to upstreams. It never touches
// dialect JSON: an upstream is a Backend, canonical in and canonical out,
// and the HTTP backend hands encoding and decoding to the upstream's
// dialect package. An upstream that answers a stream request with one
// whole JSON reply (some ignore the stream flag) has that reply decoded
// and replayed as the stream it stands for (translate.ReplayResponse),
// rendered for the client rather than relayed, and a reply that does not
// decode is the upstream's protocol error, not retried.
//
// Routing: a model name resolves to the routes of the first exact model
// name in the configuration, else of the first glob that matches. With
// several routes, the first is drawn by weight and the rest follow in
// configuration order as fallbacks; but a conversation whose newest
// reasoning (a signature, encrypted reasoning) one of the routes made goes
// to that route first (translate.Maker), the only upstream that can read
// it back and whose prompt cache holds the conversation. A request without
// such reasoning that names its conversation (the OpenAI dialects'
// prompt_cache_key, else the end user's id: user, metadata.user_id, which
// Claude Code fills with its session) goes first to the route its key
// draws by weighted rendezvous hashing: the same route for every turn, on
// every replica, and over many keys each route in proportion to its
// weight. The key is not sent to services whose dialect has no such
// member; routing is its use there.
//
// With several upstreams of one dialect configured, their opaque values
// reach clients of that dialect sealed (translate.Target.Shared), so that
// they come back naming their maker; the request may still go on as the
// client sent it, but the reply is then rendered, not relayed.
//
// Whether a failure may be retried is decided in one place,
// translate.Retry, from the facts the upstream's dialect decodes: the
// reply's status (or, inside a stream or a 200 reply, the status the error
// names), the canonical code, the upstream's own x-should-retry header,
// the wait it advised (Retry-After, RetryInfo) and whether its stream
// ended early. In that order of precedence: an early end may be retried;
// x-should-retry, when sent, decides (the messages and OpenAI services send
// it, and their SDKs obey it); else 408, 429 and 5xx (529 included) may be
// retried and other statuses not; else advice to wait means it may; else
// the codes internal, unavailable and resource exhausted may. Connection
// failures are 502 and time-outs 504 to that rule.
//
// Retries and fallback happen only before the first byte reaches the
// client: a retryable failure is retried on the same upstream up to its
// max_retries with exponential backoff, then the next route is tried. A
// Retry-After the upstream sends is honoured when it is no longer than
// MaxRetryWait; a longer one moves on to the next route at once, and with
// none left the client gets the upstream's error with its Retry-After
// (Dispatcher.retryDecision decides the wait). Other failures (bad
// request, bad key) are returned as they are, with one exception: an
// upstream that refuses the reasoning a request carried back to it as
// not its own (the canonical error's refused_reasoning, which each
// dialect reads from its service's words: an invalid thinking signature,
// invalid_encrypted_content, a corrupted thought signature) gets the
// request once more at once, every opaque value disowned
// (translate.Disown), so that no encoder sends any. A key rotated, an
// account or a route changed since the reasoning was made: the model
// loses its earlier reasoning, the turn does not fail. Call.ReasoningRetry
// names the upstream, parley_reasoning_retries_total counts it, and the
// refused attempt's span gives refused_reasoning as its retry reason.
//
// Timeouts: per upstream, a connect timeout, a response-header timeout and
// an idle timeout between two reads of the reply body. There is no total
// deadline, so long reasoning streams live as long as data flows. The
// client's request context is the upstream request's context: a client
// that goes away cancels the upstream request at once.
//
// Keys: what an upstream writes into an error (its error body, an error
// event in its stream, a reply it could not follow) passes through the
// scrubber (package secrets) in the backend, before anything else sees it:
// every configured key, client or upstream, and every piece of one a dozen
// characters long, becomes "[redacted]". Services do echo keys
// ("Incorrect API key provided: sk-..."); no client and no log line gets
// one through Parley.
package dispatch
