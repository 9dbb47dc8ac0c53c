package generatecontent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// This dialect describes function parameters and structured output with its
// own Schema object, a subset of OpenAPI 3.0; the canonical model holds JSON
// Schema. The conversions:
//
// Schema → JSON Schema (lossless): type names go to lower case
// (TYPE_UNSPECIFIED leaves type out), nullable: true becomes a type list
// with "null", every other keyword stays as it is.
//
// JSON Schema → Schema: type names go to upper case; a type list with
// "null" becomes nullable: true, a list of several other types becomes
// anyOf; anyOf with a {"type": "null"} member becomes nullable, oneOf
// becomes anyOf, const becomes a one-value enum, a single allOf member is
// inlined; $ref is resolved against $defs and definitions and inlined
// (a recursive reference stops at depth 8 as an untyped object); format is
// kept for date-time, date, time, enum, int32, int64, float and double;
// enum is kept for strings. These keywords are kept: type, format, title,
// description, nullable, enum, properties, required, propertyOrdering,
// items, minItems, maxItems, minProperties, maxProperties, minLength,
// maxLength, pattern, minimum, maximum, default, example, anyOf. Every
// other keyword ($schema, $id, $defs, $comment, additionalProperties,
// patternProperties, unevaluatedProperties, allOf of several members, not,
// if/then/else, dependent*, contains, uniqueItems, multipleOf, exclusive
// bounds, examples, readOnly, writeOnly, deprecated, content*) is dropped,
// since the service rejects the request when it meets one.

// schemaToJSONSchema converts a Schema object to JSON Schema text.
func schemaToJSONSchema(raw jsontext.Value) (string, error) {
	var v any
	if err := jsonx.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	out, err := jsonx.Marshal(fromSchema(v))
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func fromSchema(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		switch k {
		case "type", "nullable":
		case "properties":
			if props, ok := x.(map[string]any); ok {
				np := make(map[string]any, len(props))
				for name, p := range props {
					np[name] = fromSchema(p)
				}
				out[k] = np
				continue
			}
			out[k] = x
		case "items":
			out[k] = fromSchema(x)
		case "anyOf":
			if list, ok := x.([]any); ok {
				nl := make([]any, len(list))
				for i, s := range list {
					nl[i] = fromSchema(s)
				}
				out[k] = nl
				continue
			}
			out[k] = x
		default:
			out[k] = x
		}
	}
	typ, _ := m["type"].(string)
	typ = strings.ToLower(typ)
	if typ == "type_unspecified" {
		typ = ""
	}
	nullable, _ := m["nullable"].(bool)
	switch {
	case typ != "" && nullable:
		out["type"] = []any{typ, "null"}
	case typ != "":
		out["type"] = typ
	case nullable:
		out["nullable"] = true
	}
	return out
}

// maxRefDepth bounds the inlining of recursive references.
const maxRefDepth = 8

// jsonSchemaToSchema converts JSON Schema text to a Schema object.
func jsonSchemaToSchema(text string) (jsontext.Value, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var v any
	if err := jsonx.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("a JSON schema must be an object")
	}
	return schemaOf(root)
}

// schemaOf converts a JSON Schema, parsed, to a Schema object.
func schemaOf(root map[string]any) (jsontext.Value, error) {
	c := schemaConverter{defs: map[string]any{}}
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := root[key].(map[string]any); ok {
			for name, s := range d {
				c.defs["#/"+key+"/"+name] = s
			}
		}
	}
	out, err := jsonx.Marshal(c.convert(root, 0))
	if err != nil {
		return nil, err
	}
	return out, nil
}

type schemaConverter struct {
	defs map[string]any
}

var keptKeywords = map[string]bool{
	"title": true, "description": true, "required": true, "propertyOrdering": true,
	"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true,
	"minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true,
	"default": true, "example": true,
}

var keptFormats = map[string]bool{
	"date-time": true, "date": true, "time": true, "enum": true,
	"int32": true, "int64": true, "float": true, "double": true,
}

func (c *schemaConverter) convert(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	if ref, ok := m["$ref"].(string); ok {
		target, found := c.defs[ref]
		if !found || depth >= maxRefDepth {
			return map[string]any{"type": "OBJECT"}
		}
		merged := map[string]any{}
		if t, ok := target.(map[string]any); ok {
			for k, x := range t {
				merged[k] = x
			}
		}
		for k, x := range m {
			if k != "$ref" {
				merged[k] = x
			}
		}
		return c.convert(merged, depth+1)
	}
	if all, ok := m["allOf"].([]any); ok && len(all) == 1 {
		merged := map[string]any{}
		if inner, ok := c.convert(all[0], depth+1).(map[string]any); ok {
			for k, x := range inner {
				merged[k] = x
			}
		}
		rest := c.convert(without(m, "allOf"), depth)
		for k, x := range rest.(map[string]any) {
			merged[k] = x
		}
		return merged
	}
	out := map[string]any{}
	for k, x := range m {
		if keptKeywords[k] {
			out[k] = x
		}
	}
	types := typeList(m["type"])
	nullable := false
	var concrete []string
	for _, t := range types {
		if t == "null" {
			nullable = true
			continue
		}
		concrete = append(concrete, t)
	}
	if n, ok := m["nullable"].(bool); ok && n {
		nullable = true
	}
	switch len(concrete) {
	case 0:
	case 1:
		out["type"] = strings.ToUpper(concrete[0])
	default:
		var alts []any
		for _, t := range concrete {
			alts = append(alts, map[string]any{"type": strings.ToUpper(t)})
		}
		out["anyOf"] = alts
	}
	alts, _ := m["anyOf"].([]any)
	if alts == nil {
		alts, _ = m["oneOf"].([]any)
	}
	if alts != nil {
		var kept []any
		for _, a := range alts {
			if am, ok := a.(map[string]any); ok && len(am) == 1 && am["type"] == "null" {
				nullable = true
				continue
			}
			kept = append(kept, c.convert(a, depth+1))
		}
		if len(kept) == 1 && out["type"] == nil {
			for k, x := range kept[0].(map[string]any) {
				if _, set := out[k]; !set {
					out[k] = x
				}
			}
		} else if len(kept) > 0 {
			out["anyOf"] = kept
		}
	}
	if nullable {
		out["nullable"] = true
	}
	if f, ok := m["format"].(string); ok && keptFormats[f] {
		out["format"] = f
	}
	if cv, ok := m["const"]; ok {
		if s, isString := cv.(string); isString {
			out["enum"] = []any{s}
			if out["type"] == nil {
				out["type"] = "STRING"
			}
		}
	}
	if e, ok := m["enum"].([]any); ok && allStrings(e) {
		out["enum"] = e
		if out["type"] == nil {
			out["type"] = "STRING"
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		np := make(map[string]any, len(props))
		for name, p := range props {
			np[name] = c.convert(p, depth+1)
		}
		out["properties"] = np
	}
	if items, ok := m["items"]; ok {
		if list, isList := items.([]any); isList && len(list) > 0 {
			items = list[0] // tuple form: the first item's schema stands for all
		}
		out["items"] = c.convert(items, depth+1)
	}
	return out
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func typeList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{strings.ToLower(t)}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, strings.ToLower(s))
			}
		}
		return out
	}
	return nil
}

func allStrings(list []any) bool {
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return len(list) > 0
}
