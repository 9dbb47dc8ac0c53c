package generatecontent

import (
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSONFrom reads an array of contents or a single content.
func (l *ContentList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{':
		var c Content
		if err := json.UnmarshalDecode(dec, &c); err != nil {
			return err
		}
		*l = ContentList{c}
		return nil
	case '[':
		var cs []Content
		if err := json.UnmarshalDecode(dec, &cs); err != nil {
			return err
		}
		*l = cs
		return nil
	}
	return errors.New("contents must be an array of Content objects or one Content object")
}

// UnmarshalJSONFrom reads an array of parts or a single part.
func (l *PartList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{':
		var p Part
		if err := json.UnmarshalDecode(dec, &p); err != nil {
			return err
		}
		*l = PartList{p}
		return nil
	case '[':
		var ps []Part
		if err := json.UnmarshalDecode(dec, &ps); err != nil {
			return err
		}
		*l = ps
		return nil
	}
	return errors.New("parts must be an array of Part objects or one Part object")
}

// UnmarshalJSONFrom reads an array of tools or a single tool.
func (l *ToolList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{':
		var t Tool
		if err := json.UnmarshalDecode(dec, &t); err != nil {
			return err
		}
		*l = ToolList{t}
		return nil
	case '[':
		var ts []Tool
		if err := json.UnmarshalDecode(dec, &ts); err != nil {
			return err
		}
		*l = ts
		return nil
	}
	return errors.New("tools must be an array of Tool objects or one Tool object")
}
