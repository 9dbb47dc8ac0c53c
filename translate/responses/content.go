package responses

import (
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSONFrom reads a string or an array of items.
func (in *Input) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*in = Input{String: true, Text: tok.String()}
		return nil
	case '[':
		var items []Item
		if err := json.UnmarshalDecode(dec, &items); err != nil {
			return err
		}
		if items == nil {
			items = []Item{}
		}
		*in = Input{Items: items}
		return nil
	}
	return errors.New("input must be a string or an array of input items")
}

// MarshalJSONTo writes the form the input was read in.
func (in Input) MarshalJSONTo(enc *jsontext.Encoder) error {
	if in.String {
		return enc.WriteToken(jsontext.String(in.Text))
	}
	items := in.Items
	if items == nil {
		items = []Item{}
	}
	return json.MarshalEncode(enc, items)
}

// UnmarshalJSONFrom reads a string or an array of content parts.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*c = Content{String: true, Text: tok.String()}
		return nil
	case '[':
		var parts []ContentPart
		if err := json.UnmarshalDecode(dec, &parts); err != nil {
			return err
		}
		if parts == nil {
			parts = []ContentPart{}
		}
		*c = Content{Parts: parts}
		return nil
	}
	return errors.New("content must be a string or an array of content parts")
}

// MarshalJSONTo writes the form the content was read in.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.String {
		return enc.WriteToken(jsontext.String(c.Text))
	}
	parts := c.Parts
	if parts == nil {
		parts = []ContentPart{}
	}
	return json.MarshalEncode(enc, parts)
}

type toolChoiceObject ToolChoice

// UnmarshalJSONFrom reads a mode string or an object.
func (tc *ToolChoice) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*tc = ToolChoice{Mode: tok.String()}
		return nil
	case '{':
		var o toolChoiceObject
		if err := json.UnmarshalDecode(dec, &o); err != nil {
			return err
		}
		*tc = ToolChoice(o)
		return nil
	}
	return errors.New("tool_choice must be a string or an object")
}

// MarshalJSONTo writes a mode string or an object.
func (tc ToolChoice) MarshalJSONTo(enc *jsontext.Encoder) error {
	if tc.Mode != "" {
		return enc.WriteToken(jsontext.String(tc.Mode))
	}
	return json.MarshalEncode(enc, toolChoiceObject(tc))
}
