package messages

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/memo"
)

// Schemas from clients of other dialects are adjusted for this dialect's
// service before they go upstream:
//
//   - Every schema loses propertyOrdering, a content-generation keyword
//     that means nothing here.
//   - A schema the service enforces exactly (a structured-output format,
//     a tool with strict: true) is held to the subset the service accepts
//     for those, as the official SDKs adjust it: only $ref, $defs, type,
//     anyOf, oneOf (read as anyOf), allOf, description, title, enum,
//     const, properties, additionalProperties, required, items, minItems
//     (0 or 1), format (date-time, time, date, duration, email, hostname,
//     uri, ipv4, ipv6, uuid) and pattern stay; every object gets
//     additionalProperties: false; a $ref stands alone; any other keyword
//     is written into the description as {keyword: value}, so the model
//     still reads the constraint the service cannot enforce.
//
// A client of this dialect gets its schemas sent as it wrote them.

var strictKeywords = map[string]bool{
	"$ref": true, "$defs": true, "type": true, "anyOf": true, "oneOf": true, "allOf": true,
	"description": true, "title": true, "enum": true, "const": true, "properties": true,
	"additionalProperties": true, "required": true, "items": true, "minItems": true,
	"format": true, "pattern": true,
}

var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "uri": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// foreignSchema adjusts a schema from a client of another dialect; strict
// holds it to the subset the service enforces exactly. The schemas seen
// lately are adjusted once (agents send the same tools on every turn).
func foreignSchema(schema string, strict bool) (jsontext.Value, error) {
	if strict {
		return strictSchemas.Do(schema, strictForeignSchema)
	}
	return plainSchemas.Do(schema, plainForeignSchema)
}

// plainSchemas and strictSchemas remember adjusted schemas; their values
// are shared and never modified.
var (
	plainSchemas  = memo.New[jsontext.Value](maxSchemas)
	strictSchemas = memo.New[jsontext.Value](maxSchemas)
)

const maxSchemas = 1024

func plainForeignSchema(schema string) (jsontext.Value, error) { return adjustSchema(schema, false) }

func strictForeignSchema(schema string) (jsontext.Value, error) { return adjustSchema(schema, true) }

// adjustSchema is foreignSchema, every time.
func adjustSchema(schema string, strict bool) (jsontext.Value, error) {
	var v any
	if err := jsonx.Unmarshal([]byte(schema), &v); err != nil {
		return nil, fmt.Errorf("not a JSON schema: %w", err)
	}
	v = dropKeyword(v, "propertyOrdering")
	if strict {
		v = strictSchema(v)
	}
	return jsonx.Marshal(v)
}

// dropKeyword removes a keyword from a schema and every schema inside it.
func dropKeyword(v any, keyword string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, keyword)
		for k, sub := range x {
			switch k {
			case "properties", "$defs", "definitions", "patternProperties":
				if m, ok := sub.(map[string]any); ok {
					for name, s := range m {
						m[name] = dropKeyword(s, keyword)
					}
				}
			case "items", "additionalProperties", "not", "contains", "if", "then", "else":
				x[k] = dropKeyword(sub, keyword)
			case "anyOf", "oneOf", "allOf", "prefixItems":
				if list, ok := sub.([]any); ok {
					for i, s := range list {
						list[i] = dropKeyword(s, keyword)
					}
				}
			}
		}
	}
	return v
}

func strictSchema(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v // a boolean schema
	}
	if ref, ok := s["$ref"]; ok {
		return map[string]any{"$ref": ref}
	}
	extras := map[string]any{}
	for k, x := range s {
		if !strictKeywords[k] {
			extras[k] = x
			delete(s, k)
		}
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for name, d := range defs {
			defs[name] = strictSchema(d)
		}
	}
	if one, ok := s["oneOf"]; ok {
		if _, has := s["anyOf"]; !has {
			s["anyOf"] = one
		}
		delete(s, "oneOf")
	}
	if list, ok := s["anyOf"].([]any); ok {
		kept := list[:0]
		for _, variant := range list {
			if t := strictSchema(variant); !isEmptySchema(t) {
				kept = append(kept, t)
			}
		}
		s["anyOf"] = kept
	}
	if list, ok := s["allOf"].([]any); ok {
		for i, variant := range list {
			list[i] = strictSchema(variant)
		}
	}
	types := schemaTypes(s["type"])
	_, hasAny := s["anyOf"]
	_, hasAll := s["allOf"]
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if len(types) == 0 && !hasAny && !hasAll && !hasEnum && !hasConst {
		return map[string]any{} // no shape to hold to: any value
	}
	if slices.Contains(types, "object") {
		switch props, ok := s["properties"].(map[string]any); {
		case ok:
			for name, p := range props {
				props[name] = strictSchema(p)
			}
			s["additionalProperties"] = false
		case s["additionalProperties"] != nil && s["additionalProperties"] != false:
			s["additionalProperties"] = strictSchema(s["additionalProperties"])
		default:
			s["properties"] = map[string]any{}
			s["additionalProperties"] = false
		}
	}
	if slices.Contains(types, "string") {
		if f, ok := s["format"].(string); ok && !strictFormats[f] {
			extras["format"] = f
			delete(s, "format")
		}
	}
	if slices.Contains(types, "array") {
		if items, ok := s["items"]; ok {
			s["items"] = strictSchema(items)
		}
		if n, ok := s["minItems"].(float64); ok && n != 0 && n != 1 {
			extras["minItems"] = s["minItems"]
			delete(s, "minItems")
		}
	}
	if len(extras) > 0 {
		parts := make([]string, 0, len(extras))
		for _, k := range slices.Sorted(maps.Keys(extras)) {
			parts = append(parts, k+": "+extraValue(extras[k]))
		}
		note := "{" + strings.Join(parts, ", ") + "}"
		if d, _ := s["description"].(string); d != "" {
			note = d + "\n\n" + note
		}
		s["description"] = note
	}
	return s
}

func schemaTypes(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func isEmptySchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// extraValue writes a keyword's value into a description: strings as
// they are, numbers and composites as JSON.
func extraValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := jsonx.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
