package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema reflects the JSON Schema (draft 2020-12) of v's Go type with
// invopop/jsonschema. A field is required unless its json tag says
// omitempty or omitzero. Objects admit members the type does not model,
// since every wire type keeps those in the extension bag.
//
// Types whose JSON form is not their Go shape (unions with custom JSON
// methods, raw values) are described by mappers.
func Schema(v any, mappers map[reflect.Type]*jsonschema.Schema) ([]byte, error) {
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: true,
		Mapper:                    func(t reflect.Type) *jsonschema.Schema { return mappers[t] },
	}
	s := r.Reflect(v)
	return json.MarshalIndent(s, "", "  ")
}

// Inline reflects the schema of v's type with every definition inlined,
// for use inside a mapper.
func Inline(v any, mappers map[reflect.Type]*jsonschema.Schema) *jsonschema.Schema {
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: true,
		DoNotReference:            true,
		Mapper:                    func(t reflect.Type) *jsonschema.Schema { return mappers[t] },
	}
	s := r.Reflect(v)
	s.Version = ""
	return s
}

// Any is the schema of a value of any JSON type.
func Any() *jsonschema.Schema { return &jsonschema.Schema{} }

// CheckSchema compares the schema of v's type with the golden file at path
// (-update rewrites it) and returns a validator for it. The golden schema
// documents the wire shape a dialect accepts; a change to the wire types
// shows up as a diff in review.
func CheckSchema(t testing.TB, path string, v any, mappers map[reflect.Type]*jsonschema.Schema) *Validator {
	t.Helper()
	b, err := Schema(v, mappers)
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
	url := "https://schemas.parley.invalid/" + strings.TrimLeft(strings.ReplaceAll(name, "../", ""), "/")
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
