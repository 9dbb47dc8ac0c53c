package translate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

func TestToProtoKeepsDetailsOfKnownErrors(t *testing.T) {
	cause := errors.New("invalid character '}'")
	in := &translate.InputError{Field: "messages[0].content", Message: "must not be empty", Err: cause}
	wrapped := fmt.Errorf("decoding: %w", in)
	pe := translate.ToProto(wrapped)
	if pe.GetCode() != parleyv1.Code_CODE_INVALID_ARGUMENT || pe.GetFieldViolations()[0].GetField() != "messages[0].content" {
		t.Fatalf("input error = %v", pe)
	}
	if !errors.Is(wrapped, cause) {
		t.Fatal("the cause does not unwrap")
	}

	uns := translate.ToProto(translate.Unsupported(parleyv1.Dialect_DIALECT_MESSAGES, "generation.candidate_count", "only one candidate"))
	if uns.GetCode() != parleyv1.Code_CODE_INVALID_ARGUMENT || uns.GetFieldViolations()[0].GetField() != "generation.candidate_count" {
		t.Fatalf("unsupported = %v", uns)
	}

	up := translate.UpstreamFailed(&parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, HttpStatus: 529, Message: "Overloaded"})
	if got := translate.ToProto(fmt.Errorf("x: %w", up)); translate.HTTPStatusOf(got) != 529 {
		t.Fatalf("the upstream status was not kept: %v", got)
	}

	st := translate.ToProto(translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "invalid key"))
	if translate.HTTPStatusOf(st) != http.StatusUnauthorized {
		t.Fatalf("status error = %v", st)
	}
}

func TestToProtoHidesUnknownErrors(t *testing.T) {
	pe := translate.ToProto(errors.New("open /secret/path: permission denied"))
	if pe.GetCode() != parleyv1.Code_CODE_INTERNAL || pe.GetMessage() != "internal error" {
		t.Fatalf("unknown error leaked: %v", pe)
	}
	if translate.ToProto(context.Canceled).GetCode() != parleyv1.Code_CODE_CANCELED {
		t.Fatal("context.Canceled")
	}
	if translate.ToProto(fmt.Errorf("x: %w", context.DeadlineExceeded)).GetCode() != parleyv1.Code_CODE_DEADLINE_EXCEEDED {
		t.Fatal("context.DeadlineExceeded")
	}
	if translate.ToProto(nil) != nil {
		t.Fatal("nil")
	}
}

func TestHTTPStatusTablesAgree(t *testing.T) {
	// Every status a code maps to maps back to the same code, except where
	// several codes share a status.
	shared := map[int]bool{400: true, 409: true, 500: true}
	for c := range parleyv1.Code_name {
		code := parleyv1.Code(c)
		if code == parleyv1.Code_CODE_UNSPECIFIED {
			continue
		}
		s := translate.HTTPStatus(code)
		if s < 400 || s > 599 {
			t.Errorf("%v maps to %d", code, s)
		}
		if back := translate.CodeForHTTPStatus(s); !shared[s] && back != code {
			t.Errorf("%v -> %d -> %v", code, s, back)
		}
	}
	for s, want := range map[int]parleyv1.Code{413: parleyv1.Code_CODE_INVALID_ARGUMENT, 529: parleyv1.Code_CODE_UNAVAILABLE, 502: parleyv1.Code_CODE_UNAVAILABLE, 418: parleyv1.Code_CODE_FAILED_PRECONDITION, 599: parleyv1.Code_CODE_INTERNAL} {
		if got := translate.CodeForHTTPStatus(s); got != want {
			t.Errorf("status %d -> %v, want %v", s, got, want)
		}
	}
	if translate.HTTPStatusOf(&parleyv1.Error{Code: parleyv1.Code_CODE_NOT_FOUND, HttpStatus: 200}) != 404 {
		t.Error("a non-error upstream status must not be kept")
	}
}

func TestIndexNamesAnElement(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{translate.Index("tools", 3), "tools[3]"},
		{translate.Index(translate.Index("messages", 12)+".parts", 0), "messages[12].parts[0]"},
		{translate.Index("", 1234), "[1234]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
