package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema reflects the JSON Schema (draft 2020-12) of v's Go type with
// invopop/jsonschema. A field is required unless its json tag says
// omitempty or omitzero, and objects admit no property the type lacks, so a
// golden wire input that validates is one the wire types fully cover.
func Schema(v any) ([]byte, error) {
	r := &jsonschema.Reflector{Anonymous: true}
	s := r.Reflect(v)
	return json.MarshalIndent(s, "", "  ")
}

// CheckSchema compares the schema of v's type with the golden file at path
// (-update rewrites it) and returns a validator for it. The golden schema
// documents the wire shape a dialect accepts; a change to the wire types
// shows up as a diff in review.
func CheckSchema(t testing.TB, path string, v any) *Validator {
	t.Helper()
	b, err := Schema(v)
	if err != nil {
		t.Fatalf("schema of %T: %v", v, err)
	}
	JSON(t, path, b)
	val, err := NewValidator(path, b)
	if err != nil {
		t.Fatalf("schema of %T: %v", v, err)
	}
	return val
}

// Validator validates JSON documents against one schema.
type Validator struct {
	s *validator.Schema
}

// NewValidator compiles a JSON Schema document; name identifies it in
// errors.
func NewValidator(name string, schema []byte) (*Validator, error) {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	url := "mem:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &Validator{s: s}, nil
}

// Validate reports whether instance conforms, with every violation listed.
func (v *Validator) Validate(instance []byte) error {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return err
	}
	return v.s.Validate(doc)
}
