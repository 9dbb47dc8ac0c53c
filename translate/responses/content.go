package responses

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// UnmarshalJSONFrom reads a string or an array of items.
func (in *Input) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	s, items, isString, err := jsonx.ReadStringOrArray[Item](dec, "input")
	*in = Input{String: isString, Text: s, Items: items}
	return err
}

// MarshalJSONTo writes the form the input was read in.
func (in Input) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonx.WriteStringOrArray(enc, in.String, in.Text, in.Items)
}

// UnmarshalJSONFrom reads a string or an array of content parts.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	s, parts, isString, err := jsonx.ReadStringOrArray[ContentPart](dec, "content")
	*c = Content{String: isString, Text: s, Parts: parts}
	return err
}

// MarshalJSONTo writes the form the content was read in.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonx.WriteStringOrArray(enc, c.String, c.Text, c.Parts)
}

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
