package responses

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The WebSocket transport (GET /v1/responses upgraded; the Codex CLI uses
// it when its provider supports WebSockets). Each client message is a
// response.create event: the members of a POST /v1/responses body with
// "type" beside them and no "stream", which is implicit. The answer is
// the events of the response's stream, one message each, as the stream
// carries them; an error before the first event is {"type": "error",
// "status", "error": {...}}, the error object of the HTTP reply. The
// event's stream_id (for several streams on one connection) is not
// modelled and is left out; requests on one connection are answered one
// after the other.

var socket = &translate.Socket{Pattern: "GET " + Path, Request: socketRequest, Error: socketError}

func socketRequest(msg []byte) ([]byte, error) {
	var ev map[string]jsontext.Value
	if err := jsonx.Unmarshal(msg, &ev); err != nil {
		return nil, translate.Invalid("", "the message is not a JSON object: %v", err)
	}
	var typ string
	_ = jsonx.Unmarshal(ev["type"], &typ)
	if typ != "response.create" {
		return nil, translate.Invalid("type", "must be response.create; got %s", strconv.Quote(typ))
	}
	delete(ev, "type")
	delete(ev, "stream_id")
	ev["stream"] = jsontext.Value("true")
	return jsonx.Marshal(ev)
}

func socketError(status int, body []byte) []byte {
	var reply map[string]jsontext.Value
	if jsonx.Unmarshal(body, &reply) != nil || reply == nil {
		reply = map[string]jsontext.Value{}
	}
	reply["type"] = jsontext.Value(`"error"`)
	reply["status"] = jsontext.Value(strconv.Itoa(status))
	out, err := jsonx.Marshal(reply)
	if err != nil {
		return []byte(`{"type":"error","status":500,"error":{"type":"server_error","message":"internal error","param":null,"code":null}}`)
	}
	return out
}
