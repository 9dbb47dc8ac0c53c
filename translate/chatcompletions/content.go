package chatcompletions

import (
	"encoding/base64"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// UnmarshalJSONFrom reads null, a string or an array of parts.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		*c = Content{Null: true}
		return nil
	}
	s, parts, isString, err := jsonx.ReadStringOrArray[ContentPart](dec, "content")
	*c = Content{String: isString, Text: s, Parts: parts}
	return err
}

// MarshalJSONTo writes the form the content was read in.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.Null {
		return enc.WriteToken(jsontext.Null)
	}
	return jsonx.WriteStringOrArray(enc, c.String, c.Text, c.Parts)
}

// UnmarshalJSONFrom reads a string or an array of strings.
func (s *Stop) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	one, list, isString, err := jsonx.ReadStringOrArray[string](dec, "stop")
	if isString {
		list = []string{one}
	}
	*s = Stop{String: isString, Values: list}
	return err
}

// MarshalJSONTo writes the form the stop sequences were read in.
func (s Stop) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s.String && len(s.Values) == 1 {
		return enc.WriteToken(jsontext.String(s.Values[0]))
	}
	return jsonx.WriteStringOrArray(enc, false, "", s.Values)
}

// toolChoiceObject is ToolChoice without its methods.
type toolChoiceObject ToolChoice

// UnmarshalJSONFrom reads a mode string or an object.
func (tc *ToolChoice) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var o toolChoiceObject
	mode, err := jsonx.ReadStringOrObject(dec, &o, "tool_choice")
	*tc = ToolChoice(o)
	tc.Mode = mode
	return err
}

// MarshalJSONTo writes a mode string or an object.
func (tc ToolChoice) MarshalJSONTo(enc *jsontext.Encoder) error {
	if tc.Mode != "" {
		return enc.WriteToken(jsontext.String(tc.Mode))
	}
	return json.MarshalEncode(enc, toolChoiceObject(tc))
}

func base64Std(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
