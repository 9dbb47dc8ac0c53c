package translate_test

import (
	"errors"
	"strconv"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// TestCheckRequestTakesEveryField: the sample that sets every canonical
// field passes, so the check refuses nothing a dialect decoder produces.
func TestCheckRequestTakesEveryField(t *testing.T) {
	if err := translate.CheckRequest(fullRequest(), "request."); err != nil {
		t.Fatal(err)
	}
}

// TestCheckRequestLists: several faults are listed together, each with
// its path, and the message names the first.
func TestCheckRequestLists(t *testing.T) {
	req := fullRequest()
	req.Model = ""
	req.Generation.TopP = new(1.5)
	req.Messages[0].Parts = append(req.Messages[0].Parts, &parleyv1.Part{})
	err := translate.CheckRequest(req, "r.")
	var se *translate.StatusError
	if !errors.As(err, &se) || se.Err.GetCode() != parleyv1.Code_CODE_INVALID_ARGUMENT {
		t.Fatalf("got %v", err)
	}
	var fields []string
	for _, v := range se.Err.GetFieldViolations() {
		fields = append(fields, v.GetField())
	}
	want := []string{"r.model", "r.messages[0].parts[" + strconv.Itoa(len(req.Messages[0].Parts)-1) + "]", "r.generation.top_p"}
	if len(fields) != len(want) || fields[0] != want[0] || fields[1] != want[1] || fields[2] != want[2] {
		t.Errorf("violations %v, want %v", fields, want)
	}
	if se.Err.GetMessage() != "r.model: is required (and 2 more)" {
		t.Errorf("message %q", se.Err.GetMessage())
	}
}
