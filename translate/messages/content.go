package messages

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSONFrom reads a string or an array of blocks.
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
		var blocks []Block
		if err := json.UnmarshalDecode(dec, &blocks); err != nil {
			return err
		}
		*c = Content{Blocks: blocks}
		if c.Blocks == nil {
			c.Blocks = []Block{}
		}
		return nil
	case 'n':
		return fmt.Errorf("content must be a string or an array of content blocks, not null")
	}
	return fmt.Errorf("content must be a string or an array of content blocks")
}

// MarshalJSONTo writes the form the content was read in.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.String {
		return enc.WriteToken(jsontext.String(c.Text))
	}
	blocks := c.Blocks
	if blocks == nil {
		blocks = []Block{}
	}
	return json.MarshalEncode(enc, blocks)
}
