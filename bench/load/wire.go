package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The wire shapes of the four dialects Parley speaks to upstreams: what a
// client sends and what a service answers, whole and streamed. The shapes
// follow the recorded replies under testdata/<dialect>/ (stream_text and
// friends), with a longer text so that a stream has about fifteen events,
// as a short real answer does.

// dialect names one chat dialect, as the scenarios and the mock name it.
type dialect string

const (
	messages  dialect = "messages"
	chat      dialect = "chat"
	responses dialect = "responses"
	generate  dialect = "generate"
)

// configName is the dialect's name in Parley's configuration.
func (d dialect) configName() string {
	switch d {
	case chat:
		return "chat_completions"
	case generate:
		return "generate_content"
	}
	return string(d)
}

// upstreamModel is the model name the mock of d is asked for; a held
// stream asks for the same name with holdSuffix, which is how the mock
// tells it apart (Parley relays no client header upstream, but it does
// relay the model it was configured with).
func (d dialect) upstreamModel(hold bool) string {
	if hold {
		return "mock-" + string(d) + holdSuffix
	}
	return "mock-" + string(d)
}

// parleyModel is the model name a client asks Parley for to reach the mock
// of d.
func (d dialect) parleyModel(hold bool) string {
	if hold {
		return "m-" + string(d) + holdSuffix
	}
	return "m-" + string(d)
}

const holdSuffix = "-hold"

// replyText is the answer every mock gives, cut into deltas for streams.
const replyText = "Revenue grew 12% year over year to $48.2 million, driven mostly by the new " +
	"subscription tier, which now makes up a third of sales. Costs stayed flat at $31.5 million, " +
	"so the operating margin widened by four points."

// replyEnd is the end of replyText, which a whole reply must carry back.
const replyEnd = "four points."

// The conversation every client sends: a system prompt and three turns.
const (
	systemPrompt = "You are a concise financial assistant. Answer in at most two sentences."
	userTurn1    = "Summarise the quarterly report I pasted earlier."
	modelTurn    = "Sure. Which parts matter most to you?"
	userTurn2    = "Revenue and costs, please, with the figures."
)

// firstTurn is the user's first turn, with a pasted report of about kb
// KiB when kb is above 0: a long conversation, as an agent's is.
func firstTurn(kb int) string {
	const report = " Revenue for the quarter was $48.2 million, up 12% on the year; costs were $31.5 million."
	if kb <= 0 {
		return userTurn1
	}
	return userTurn1 + "\n\n" + strings.Repeat(report, (kb<<10-len(userTurn1))/len(report)+1)
}

// quote renders s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always marshals
	}
	return string(b)
}

// pieces cuts replyText into n runs of whole words, so that the deltas of
// a stream read back as the whole text.
func pieces(n int) []string {
	words := strings.SplitAfter(replyText, " ")
	out := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(words)/n, (i+1)*len(words)/n
		out = append(out, strings.Join(words[lo:hi], ""))
	}
	return out
}

// sse renders one server-sent event; an empty name leaves the event line
// out, as the chat-completions and content-generation services do.
func sse(name, data string) []byte {
	if name == "" {
		return []byte("data: " + data + "\n\n")
	}
	return []byte("event: " + name + "\ndata: " + data + "\n\n")
}

// request is one request a client sends: where, with which body and
// headers. It is sent again and again, so it is built once.
type request struct {
	path   string
	body   []byte
	header http.Header
}

// clientRequest is the request a client of dialect d sends for model,
// whole or streamed.
func clientRequest(d dialect, model, turn1 string, stream bool) request {
	h := http.Header{"Content-Type": {"application/json"}}
	switch d {
	case messages:
		h.Set("Anthropic-Version", "2023-06-01")
		return request{path: "/v1/messages", header: h, body: fmt.Appendf(nil,
			`{"model":%q,"max_tokens":1024,"system":%s,"messages":[{"role":"user","content":%s},`+
				`{"role":"assistant","content":%s},{"role":"user","content":%s}],"stream":%t}`,
			model, quote(systemPrompt), quote(turn1), quote(modelTurn), quote(userTurn2), stream)}
	case chat:
		// A streamed request asks for usage, as the official SDKs' users
		// mostly do; it is what a usage-counting gateway needs anyway.
		opts := ""
		if stream {
			opts = `,"stream_options":{"include_usage":true}`
		}
		return request{path: "/v1/chat/completions", header: h, body: fmt.Appendf(nil,
			`{"model":%q,"messages":[{"role":"system","content":%s},{"role":"user","content":%s},`+
				`{"role":"assistant","content":%s},{"role":"user","content":%s}],"max_completion_tokens":1024,"stream":%t%s}`,
			model, quote(systemPrompt), quote(turn1), quote(modelTurn), quote(userTurn2), stream, opts)}
	case responses:
		// store:false, as agent clients send it: nothing is kept, so the
		// scenario measures translation, not the response store.
		return request{path: "/v1/responses", header: h, body: fmt.Appendf(nil,
			`{"model":%q,"instructions":%s,"input":[{"role":"user","content":%s},`+
				`{"role":"assistant","content":%s},{"role":"user","content":%s}],"max_output_tokens":1024,"store":false,"stream":%t}`,
			model, quote(systemPrompt), quote(turn1), quote(modelTurn), quote(userTurn2), stream)}
	}
	path := "/v1beta/models/" + model + ":generateContent"
	if stream {
		path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return request{path: path, header: h, body: fmt.Appendf(nil,
		`{"systemInstruction":{"parts":[{"text":%s}]},"contents":[{"role":"user","parts":[{"text":%s}]},`+
			`{"role":"model","parts":[{"text":%s}]},{"role":"user","parts":[{"text":%s}]}],"generationConfig":{"maxOutputTokens":1024}}`,
		quote(systemPrompt), quote(turn1), quote(modelTurn), quote(userTurn2))}
}

// streamEnd is what the last bytes of a complete stream of dialect d
// carry: the stream's own end, so that a stream cut short, or ended with
// an in-stream error, is counted as an error.
func streamEnd(d dialect) string {
	switch d {
	case messages:
		return "message_stop"
	case chat:
		return "[DONE]"
	case responses:
		return "response.completed"
	}
	return "STOP"
}

// reply is what a mock answers: the whole JSON body, and the stream's
// events with how many of them a held stream sends before it holds.
type reply struct {
	whole  []byte
	events [][]byte
	head   int
}

// replyFor returns the mock reply of dialect d.
func replyFor(d dialect) reply {
	switch d {
	case messages:
		return messagesReply()
	case chat:
		return chatReply()
	case responses:
		return responsesReply()
	}
	return generateReply()
}

func messagesReply() reply {
	const usage = `"usage":{"input_tokens":58,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":%d,"service_tier":"standard"}`
	const head = `"model":"claude-sonnet-4-5-20250929","id":"msg_01QC4g3HwBThD4BaNtBckFDJ","type":"message","role":"assistant"`
	r := reply{head: 3}
	r.whole = fmt.Appendf(nil, `{%s,"content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,`+usage+`}`,
		head, quote(replyText), 47)
	r.events = append(r.events,
		sse("message_start", fmt.Sprintf(`{"type":"message_start","message":{%s,"content":[],"stop_reason":null,"stop_sequence":null,`+usage+`}}`, head, 1)),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	for _, p := range pieces(10) {
		r.events = append(r.events, sse("content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quote(p)+`}}`))
	}
	r.events = append(r.events,
		sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},`+
			`"usage":{"input_tokens":58,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":47}}`),
		sse("message_stop", `{"type":"message_stop"}`))
	return r
}

func chatReply() reply {
	const usage = `"usage":{"prompt_tokens":58,"completion_tokens":47,"total_tokens":105,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
	const id = `"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0"`
	const tail = `"service_tier":"default","system_fingerprint":"fp_de604bd877"`
	chunk := func(choices string) []byte {
		return sse("", `{`+id+`,"object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","choices":`+choices+`,`+tail+`}`)
	}
	r := reply{head: 2}
	r.whole = fmt.Appendf(nil, `{%s,"object":"chat.completion","created":1770933892,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":%s,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],%s,%s}`,
		id, quote(replyText), usage, tail)
	r.events = append(r.events, chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]`))
	for _, p := range pieces(11) {
		r.events = append(r.events, chunk(`[{"index":0,"delta":{"content":`+quote(p)+`},"finish_reason":null,"logprobs":null}]`))
	}
	r.events = append(r.events,
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop","logprobs":null}]`),
		sse("", `{`+id+`,"object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-2025-04-14","choices":[],`+usage+`,`+tail+`}`),
		sse("", "[DONE]"))
	return r
}

func responsesReply() reply {
	const msgID = "msg_67ccd2bf17f0819081ff3bb2cf6508e6"
	response := func(status, output, usage string) string {
		return fmt.Sprintf(`{"id":"resp_67ccd2bed1ec8190b14f964abc054267","object":"response","created_at":1741476542,"status":%q,`+
			`"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":1024,"model":"gpt-4.1-2025-04-14",`+
			`"output":%s,"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},`+
			`"store":false,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,`+
			`"truncation":"disabled","usage":%s,"user":null,"metadata":{}}`, status, output, usage)
	}
	const usage = `{"input_tokens":58,"input_tokens_details":{"cached_tokens":0},"output_tokens":47,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":105}`
	item := `{"type":"message","id":"` + msgID + `","status":"completed","role":"assistant","content":[{"type":"output_text","text":` +
		quote(replyText) + `,"annotations":[]}]}`
	part := `"item_id":"` + msgID + `","output_index":0,"content_index":0`
	r := reply{head: 5, whole: []byte(response("completed", "["+item+"]", usage))}
	seq := 0
	add := func(name, data string) {
		r.events = append(r.events, sse(name, fmt.Sprintf(`{"type":%q,%s,"sequence_number":%d}`, name, data, seq)))
		seq++
	}
	inProgress := response("in_progress", "[]", "null")
	add("response.created", `"response":`+inProgress)
	add("response.in_progress", `"response":`+inProgress)
	add("response.output_item.added", `"output_index":0,"item":{"id":"`+msgID+`","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	add("response.content_part.added", part+`,"part":{"type":"output_text","annotations":[],"text":""}`)
	for _, p := range pieces(7) {
		add("response.output_text.delta", part+`,"delta":`+quote(p)+`,"logprobs":[]`)
	}
	add("response.output_text.done", part+`,"text":`+quote(replyText)+`,"logprobs":[]`)
	add("response.content_part.done", part+`,"part":{"type":"output_text","annotations":[],"text":`+quote(replyText)+`}`)
	add("response.output_item.done", `"output_index":0,"item":`+item)
	add("response.completed", `"response":`+response("completed", "["+item+"]", usage))
	return r
}

func generateReply() reply {
	const meta = `"modelVersion":"gemini-2.5-flash","responseId":"vQRpaqzAPN2M9MoPxPq2uQ4"`
	usage := func(out int) string {
		return fmt.Sprintf(`"usageMetadata":{"promptTokenCount":58,"candidatesTokenCount":%d,"totalTokenCount":%d,`+
			`"promptTokensDetails":[{"modality":"TEXT","tokenCount":58}]}`, out, 58+out)
	}
	candidate := func(text, finish string) string {
		return `{"candidates":[{"content":{"parts":[{"text":` + quote(text) + `}],"role":"model"}` + finish + `,"index":0}],`
	}
	r := reply{head: 1}
	r.whole = []byte(candidate(replyText, `,"finishReason":"STOP"`) + usage(47) + `,` + meta + `}`)
	ps := pieces(15)
	for i, p := range ps {
		finish := ""
		if i == len(ps)-1 {
			finish = `,"finishReason":"STOP"`
		}
		r.events = append(r.events, sse("", candidate(p, finish)+usage(3*(i+1))+`,`+meta+`}`))
	}
	return r
}
