package cross_test

import (
	"net/http"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// The tests in this file hold the dialects to the facts the dispatcher's
// retry without reasoning rests on (guide §8 item 19; issue 23): each
// upstream dialect recognises its service refusing reasoning it did not
// make, and a disowned request carries no reasoning to any upstream.

// reasoningTurn is a conversation whose assistant turn holds reasoning
// made by dialect d's upstream "acct-a": a signed thought, encrypted
// reasoning with its item id, and a signed call.
func reasoningTurn(d parleyv1.Dialect) *parleyv1.Request {
	made := func(v string) *parleyv1.Opaque {
		return &parleyv1.Opaque{Value: v, Origin: &parleyv1.Origin{Dialect: d, Upstream: "acct-a"}}
	}
	call := translate.CallPart("call_1", "get_weather", `{"city":"Paris"}`)
	call.Signature = made("c2lnLWNhbGw=")
	return &parleyv1.Request{
		Model: "m",
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather in Paris?")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT,
				&parleyv1.Part{
					Kind:      &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Call the tool.", EncryptedContent: made("ZW5jLXJlYXNvbmluZw==")}},
					Signature: made("c2lnLXRob3VnaHQ="),
					ItemId:    "rs_1",
				},
				call),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.ResultPart("call_1", "rain", false)),
		},
		Tools: []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}}}`}}}},
	}
}

// TestDisownedReasoningGoesNowhere: toward the very upstream that made
// it, every dialect sends a request's reasoning back; disowned, none
// sends any of it, and the rest of the conversation is unchanged.
func TestDisownedReasoningGoesNowhere(t *testing.T) {
	opaque := []string{"c2lnLWNhbGw=", "ZW5jLXJlYXNvbmluZw==", "c2lnLXRob3VnaHQ="}
	for _, up := range []translate.Upstream{messages.Upstream{}, generatecontent.Upstream{}, responses.Upstream{}, converse.Upstream{}} {
		name := translate.DialectName(up.Dialect())
		t.Run(name, func(t *testing.T) {
			req := reasoningTurn(up.Dialect())
			target := translate.Target{Model: "anthropic.claude-sonnet-4-5", Upstream: "acct-a"}
			body := func(r *parleyv1.Request) string {
				out, err := up.EncodeRequest(r, target)
				if err != nil {
					t.Fatal(err)
				}
				return string(out.Body)
			}
			own := body(req)
			sent := 0
			for _, v := range opaque {
				if strings.Contains(own, v) {
					sent++
				}
			}
			if sent == 0 {
				t.Fatalf("the maker got none of its reasoning back: %s", own)
			}
			disowned := translate.Disown(req)
			got := body(disowned)
			for _, v := range opaque {
				if strings.Contains(got, v) {
					t.Errorf("disowned reasoning %s still goes: %s", v, got)
				}
			}
			if !strings.Contains(got, "get_weather") || !strings.Contains(got, "rain") || !strings.Contains(got, "Weather in Paris?") {
				t.Errorf("the conversation lost more than its reasoning: %s", got)
			}
			if req.GetMessages()[1].GetParts()[0].GetSignature().GetOrigin().GetUpstream() != "acct-a" {
				t.Error("Disown changed the request it was given")
			}
		})
	}
	plain := &parleyv1.Request{Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("hi"))}}
	if translate.Disown(plain) != plain {
		t.Error("a request without reasoning was copied")
	}
}

// TestRefusedReasoningIsRecognised: each service's refusal of reasoning
// it did not make, in its own words, is marked; its other refusals are
// not.
func TestRefusedReasoningIsRecognised(t *testing.T) {
	aws := http.Header{"X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	for _, c := range []struct {
		name   string
		up     translate.Upstream
		status int
		header http.Header
		body   string
		want   bool
	}{
		{"messages signature", messages.Upstream{}, 400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block"}}`, true},
		{"messages other", messages.Upstream{}, 400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: Field required"}}`, false},
		{"responses encrypted content", responses.Upstream{}, 400, nil,
			`{"error":{"message":"The encrypted content for item rs_0a1b could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}`, true},
		{"responses other", responses.Upstream{}, 400, nil,
			`{"error":{"message":"Invalid value for 'input'.","type":"invalid_request_error","param":"input","code":"invalid_value"}}`, false},
		{"chat other", chatcompletions.Upstream{}, 400, nil,
			`{"error":{"message":"Invalid value for 'messages'.","type":"invalid_request_error","param":"messages","code":null}}`, false},
		{"content generation signature", generatecontent.Upstream{}, 400, nil,
			`{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}`, true},
		{"content generation other", generatecontent.Upstream{}, 400, nil,
			`{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"exclusiveMinimum\"","status":"INVALID_ARGUMENT"}}`, false},
		{"converse signature", converse.Upstream{}, 400, aws,
			`{"message":"messages.1.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block"}`, true},
		{"converse other", converse.Upstream{}, 400, aws, `{"message":"A conversation must start with a user message."}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := c.header
			if h == nil {
				h = http.Header{}
			}
			e := c.up.DecodeError(c.status, h, []byte(c.body))
			if e.GetRefusedReasoning() != c.want {
				t.Errorf("refused_reasoning = %v, want %v (%v)", e.GetRefusedReasoning(), c.want, e)
			}
			if e.GetRetry().GetRetryable() {
				t.Errorf("a 400 is retryable: %v", e)
			}
		})
	}
}
