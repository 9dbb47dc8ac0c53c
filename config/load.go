package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem in a configuration file, at a key and line.
type Error struct {
	File string
	Line int
	// Key is the path of the key at fault, such as "upstreams[1].dialect".
	Key     string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Parse reads and checks a configuration. name labels errors; lookup
// resolves ${VAR}; dialects are the names of the dialects Parley speaks
// (dialects.All().Names()), which upstreams may name beside echo.
func Parse(name string, data []byte, lookup func(string) (string, bool), dialects []string) (*Config, error) {
	var c Config
	data = quoteFlowVars(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty document is a configuration of defaults.
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	at := func(key string) int { return lineOf(&root, key) }

	var errs Errors
	expandAll(reflect.ValueOf(&c).Elem(), "", lookup, func(key, msg string) {
		errs = append(errs, &Error{File: name, Line: at(key), Key: key, Message: msg})
	})
	if len(errs) > 0 {
		return nil, errs
	}
	c.applyDefaults()
	for _, p := range c.validate(append(slices.Clone(dialects), DialectEcho)) {
		errs = append(errs, &Error{File: name, Line: at(p.key), Key: p.key, Message: p.msg})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &c, nil
}

// yamlError turns the YAML library's errors ("yaml: line 3: ...") into
// errors naming the file and line.
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs Errors
		for _, msg := range te.Errors {
			errs = append(errs, lineMessage(name, msg))
		}
		return errs
	}
	return Errors{lineMessage(name, strings.TrimPrefix(err.Error(), "yaml: "))}
}

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func lineMessage(name, msg string) *Error {
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: n, Message: m[2]}
	}
	return &Error{File: name, Message: msg}
}

// lineOf finds the line of a key path such as "upstreams[1].dialect" in a
// parsed document; 0 when it is not there. A path that stops early
// (a missing key) gets the line of the deepest part that exists.
func lineOf(root *yaml.Node, key string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, step := range splitKey(key) {
		var next *yaml.Node
		switch {
		case step.index >= 0 && n.Kind == yaml.SequenceNode && step.index < len(n.Content):
			next = n.Content[step.index]
		case step.index < 0 && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step.name {
					next = n.Content[i+1]
					line = n.Content[i].Line
					break
				}
			}
		}
		if next == nil {
			return line
		}
		n = next
		if step.index >= 0 || n.Kind == yaml.ScalarNode {
			line = n.Line
		}
	}
	return line
}

type keyStep struct {
	name  string
	index int
}

func splitKey(key string) []keyStep {
	var steps []keyStep
	for part := range strings.SplitSeq(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			steps = append(steps, keyStep{name: name, index: -1})
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			n, err := strconv.Atoi(num)
			if err != nil {
				break
			}
			steps = append(steps, keyStep{index: n})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return steps
}

// flowVarRE finds a ${VAR} that is a whole item of a flow sequence, as in
// keys: [${ADMIN_KEY}], which YAML itself cannot read: braces are flow
// indicators there.
var flowVarRE = regexp.MustCompile(`([\[,][ \t]*)(\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}\[\],"'\n]*)?\})([ \t]*[\],])`)

// quoteFlowVars quotes each ${VAR} that is a whole item of a flow
// sequence, so that the file reads as its author meant; lines stay where
// they are.
func quoteFlowVars(data []byte) []byte {
	if !bytes.Contains(data, []byte("${")) {
		return data
	}
	// Twice, since neighbouring items share the comma between them.
	for range 2 {
		data = flowVarRE.ReplaceAll(data, []byte(`$1"$2"$3`))
	}
	return data
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-fallback} in s. It reports unset
// variables by name.
func expand(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var missing []string
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		if v, ok := lookup(sub[1]); ok && (v != "" || sub[2] == "") {
			return v
		}
		if sub[2] != "" {
			return sub[3]
		}
		missing = append(missing, sub[1])
		return ""
	})
	return out, missing
}

// expandAll expands every string reachable from v, reporting each unset
// variable at its key.
func expandAll(v reflect.Value, key string, lookup func(string) (string, bool), report func(key, msg string)) {
	switch v.Kind() {
	case reflect.String:
		s, missing := expand(v.String(), lookup)
		for _, name := range missing {
			report(key, fmt.Sprintf("environment variable %s is not set (write ${%s:-} to allow it empty)", name, name))
		}
		v.SetString(s)
	case reflect.Pointer:
		if !v.IsNil() {
			expandAll(v.Elem(), key, lookup, report)
		}
	case reflect.Slice:
		for i := range v.Len() {
			expandAll(v.Index(i), fmt.Sprintf("%s[%d]", key, i), lookup, report)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			val := reflect.New(iter.Value().Type()).Elem()
			val.Set(iter.Value())
			expandAll(val, key+"."+iter.Key().String(), lookup, report)
			v.SetMapIndex(iter.Key(), val)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			k := tag
			if key != "" {
				k = key + "." + tag
			}
			expandAll(v.Field(i), k, lookup, report)
		}
	}
}
