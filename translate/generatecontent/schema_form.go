package generatecontent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/memo"
)

// Toward the service, a JSON Schema from a client of another dialect (a
// function's parameters, a structured answer's schema) goes in one of
// the service's two forms:
//
//   - the Schema object (parameters, responseSchema) when that form holds
//     all of it (subsetLoss finds nothing): every content-generation
//     service and model takes it;
//   - else JSON Schema itself (parametersJsonSchema, responseJsonSchema).
//     The service's reference says the full JSON Schema may be sent there
//     and names the keywords it uses; the Gemini CLI sends every tool
//     that way. Two rules of that reference are kept: a sub-schema with
//     $ref may have no other keywords than those starting with "$" (the
//     others are removed and listed as dropped), and "$schema", which the
//     service has been seen to refuse, is left out, as is "$comment";
//     both are notes for schema tools, never for the model, so they are
//     not listed.
//
// Before this rule the Schema form was used always, and what it could
// not hold (additionalProperties, exclusive bounds, numeric enums,
// recursive references ...) was lost without a word: real agents' tool
// schemas are full of it (testdata/agent_tools).

// schemaForm is the form a JSON Schema goes to the service in: exactly
// one of schema (the Schema object) and jsonSchema is set.
type schemaForm struct {
	schema     jsontext.Value
	jsonSchema jsontext.Value
	// dropped are the paths, under the schema, of what neither form
	// carries ("properties.path.description").
	dropped []string
}

// forms remembers the form of the schemas seen lately. Agents send the
// same tools on every turn of a conversation, so choosing a form is done
// once per schema rather than once per request. Cached forms are never
// modified.
var forms = memo.New[schemaForm](maxForms)

const maxForms = 1024

// formOf chooses the form of a client's JSON Schema text.
func formOf(text string) (schemaForm, error) {
	return forms.Do(text, chooseForm)
}

// chooseForm chooses the form of a client's JSON Schema text.
func chooseForm(text string) (schemaForm, error) {
	if strings.TrimSpace(text) == "" {
		return schemaForm{}, nil
	}
	var v any
	if err := jsonx.Unmarshal([]byte(text), &v); err != nil {
		return schemaForm{}, fmt.Errorf("not a JSON schema: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return schemaForm{}, errors.New("a JSON schema must be an object")
	}
	w := lossWalker{defs: rootDefs(root)}
	if !w.lossy(root, 0) {
		s, err := schemaOf(root)
		return schemaForm{schema: s}, err
	}
	var dropped []string
	cleaned := forService(root, "", &dropped)
	out, err := jsonx.Marshal(cleaned)
	if err != nil {
		return schemaForm{}, err
	}
	return schemaForm{jsonSchema: out, dropped: dropped}, nil
}

// rootDefs are the definitions a root schema's references can name.
func rootDefs(root map[string]any) map[string]any {
	defs := map[string]any{}
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := root[key].(map[string]any); ok {
			for name, s := range d {
				defs["#/"+key+"/"+name] = s
			}
		}
	}
	return defs
}

// join adds a member to a path under a schema.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// The keywords that are notes for schema tools: both forms leave them
// out, unreported.
var schemaNotes = map[string]bool{"$schema": true, "$comment": true, "$id": true, "$anchor": true}

// lossWalker says whether the Schema form would lose any of a JSON
// Schema, following jsonSchemaToSchema's rules keyword by keyword; it
// stops at the first loss.
type lossWalker struct {
	defs map[string]any
}

func (w *lossWalker) lossy(v any, depth int) bool {
	m, ok := v.(map[string]any)
	if !ok {
		b, isBool := v.(bool)
		return !isBool || !b // false, or not a schema at all
	}
	if ref, ok := m["$ref"].(string); ok {
		target, found := w.defs[ref]
		if !found || depth >= maxRefDepth {
			return true
		}
		merged := maps.Clone(without(m, "$ref"))
		if t, ok := target.(map[string]any); ok {
			for k, x := range t {
				if _, set := merged[k]; !set {
					merged[k] = x
				}
			}
		}
		return w.lossy(merged, depth+1)
	}
	for k, x := range m {
		switch {
		case keptKeywords[k] || schemaNotes[k] || k == "type" || k == "nullable":
		case k == "$defs" || k == "definitions":
			if depth > 0 {
				return true // only the root's are read
			}
		case k == "anyOf" || k == "oneOf":
			if k == "oneOf" && m["anyOf"] != nil {
				return true // anyOf wins
			}
			list, ok := x.([]any)
			if !ok {
				return true
			}
			for _, s := range list {
				if w.lossy(s, depth+1) {
					return true
				}
			}
		case k == "allOf":
			list, ok := x.([]any)
			if !ok || len(list) != 1 || w.lossy(list[0], depth+1) {
				return true
			}
		case k == "format":
			if f, ok := x.(string); !ok || !keptFormats[f] {
				return true
			}
		case k == "const":
			if _, ok := x.(string); !ok {
				return true
			}
		case k == "enum":
			if list, ok := x.([]any); !ok || !allStrings(list) {
				return true
			}
		case k == "properties":
			props, ok := x.(map[string]any)
			if !ok {
				return true
			}
			for _, p := range props {
				if w.lossy(p, depth+1) {
					return true
				}
			}
		case k == "items":
			if list, ok := x.([]any); ok {
				if len(list) != 1 {
					return true // a tuple: one schema stands for all
				}
				x = list[0]
			}
			if w.lossy(x, depth+1) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// The keywords whose value is a schema, a list of schemas, or a map of
// names to schemas: where forService looks for sub-schemas. Values of
// other keywords (enum, const, default, examples) are data, not schemas,
// and are left as they are.
var (
	schemaValued = map[string]bool{
		"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedProperties": true, "unevaluatedItems": true,
		"additionalItems": true,
	}
	schemaListed = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
	schemaMapped = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true,
	}
)

// forService is a JSON Schema as the service takes it in its JSON Schema
// form: without "$schema" and "$comment", and with only "$" keywords
// beside a $ref (the others are appended to dropped).
func forService(v any, path string, dropped *[]string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	_, hasRef := m["$ref"]
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		x := m[k]
		at := join(path, k)
		switch {
		case k == "$schema" || k == "$comment":
			continue
		case hasRef && !strings.HasPrefix(k, "$"):
			*dropped = append(*dropped, at)
			continue
		case schemaValued[k]:
			if list, ok := x.([]any); ok && k == "items" {
				x = forServiceList(list, at, dropped)
			} else {
				x = forService(x, at, dropped)
			}
		case schemaListed[k]:
			if list, ok := x.([]any); ok {
				x = forServiceList(list, at, dropped)
			}
		case schemaMapped[k]:
			if sub, ok := x.(map[string]any); ok {
				nm := make(map[string]any, len(sub))
				for _, name := range slices.Sorted(maps.Keys(sub)) {
					nm[name] = forService(sub[name], join(at, name), dropped)
				}
				x = nm
			}
		}
		out[k] = x
	}
	return out
}

func forServiceList(list []any, path string, dropped *[]string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = forService(s, translate.Index(path, i), dropped)
	}
	return out
}
