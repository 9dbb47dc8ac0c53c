package chatcompletions

import (
	"encoding/base64"
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSONFrom reads null, a string or an array of parts.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		*c = Content{Null: true}
		return nil
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
	return errors.New("content must be a string, an array of content parts or null")
}

// MarshalJSONTo writes the form the content was read in.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	switch {
	case c.Null:
		return enc.WriteToken(jsontext.Null)
	case c.String:
		return enc.WriteToken(jsontext.String(c.Text))
	}
	parts := c.Parts
	if parts == nil {
		parts = []ContentPart{}
	}
	return json.MarshalEncode(enc, parts)
}

// UnmarshalJSONFrom reads a string or an array of strings.
func (s *Stop) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*s = Stop{String: true, Values: []string{tok.String()}}
		return nil
	case '[':
		var v []string
		if err := json.UnmarshalDecode(dec, &v); err != nil {
			return err
		}
		*s = Stop{Values: v}
		return nil
	}
	return errors.New("stop must be a string or an array of strings")
}

// MarshalJSONTo writes the form the stop sequences were read in.
func (s Stop) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s.String && len(s.Values) == 1 {
		return enc.WriteToken(jsontext.String(s.Values[0]))
	}
	v := s.Values
	if v == nil {
		v = []string{}
	}
	return json.MarshalEncode(enc, v)
}

// toolChoiceObject is ToolChoice without its methods.
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

func base64Std(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
