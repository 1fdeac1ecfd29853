package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// valueKind is the shape of a decoded node.
type valueKind int

const (
	kindNull valueKind = iota
	kindScalar
	kindObject
	kindArray
)

func (k valueKind) String() string {
	return [...]string{"null", "scalar", "object", "array"}[k]
}

// value is one decoded YAML/JSON node with its source line, so every field of every
// object can be located for error messages.
type value struct {
	kind   valueKind
	line   int
	keys   []string          // object keys in document order
	fields map[string]*value // object members
	items  []*value          // array items
	// scalar is a string, bool or json.Number (numbers keep their literal text, so no
	// float ever stands between the manifest and a quantity).
	scalar any
}

// maxNodes bounds the size of one document (a `kubectl get -o yaml` List of thousands
// of pods is one document, so the bound is generous).
const maxNodes = 1 << 22

// maxAliasNodes bounds the nodes reached through aliases ("billion laughs"): real
// manifests rarely use aliases, and never to build large trees.
const maxAliasNodes = 1 << 14

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 200

// converter turns yaml.Nodes into values, counting nodes against maxNodes.
type converter struct {
	nodes      int
	aliasDepth int // > 0 while converting below an alias
	aliasNodes int
}

func (c *converter) convert(n *yaml.Node, depth int) (*value, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, fmt.Errorf("document too large (more than %d nodes)", maxNodes)
	}
	if c.aliasDepth > 0 {
		c.aliasNodes++
		if c.aliasNodes > maxAliasNodes {
			return nil, fmt.Errorf("aliases expand to more than %d nodes", maxAliasNodes)
		}
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("document nested deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &value{kind: kindNull, line: n.Line}, nil
		}
		return c.convert(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unresolved alias", n.Line)
		}
		c.aliasDepth++
		v, err := c.convert(n.Alias, depth+1)
		c.aliasDepth--
		if err != nil {
			return nil, err
		}
		cp := *v
		cp.line = n.Line
		return &cp, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.SequenceNode:
		v := &value{kind: kindArray, line: n.Line}
		for _, item := range n.Content {
			iv, err := c.convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, iv)
		}
		return v, nil
	case yaml.ScalarNode:
		return scalarValue(n), nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func (c *converter) mapping(n *yaml.Node, depth int) (*value, error) {
	v := &value{kind: kindObject, line: n.Line, fields: map[string]*value{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: mapping keys must be plain strings", k.Line)
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return nil, fmt.Errorf("line %d: YAML merge keys (<<) are not supported", k.Line)
		}
		if _, dup := v.fields[k.Value]; dup {
			return nil, fmt.Errorf("line %d: key %q appears twice in one mapping", k.Line, k.Value)
		}
		cv, err := c.convert(val, depth+1)
		if err != nil {
			return nil, err
		}
		cv.line = k.Line // a value's errors belong on its key's line
		v.keys = append(v.keys, k.Value)
		v.fields[k.Value] = cv
	}
	return v, nil
}

// jsonNumber matches the numbers JSON accepts, so YAML's other forms (0x1f, 1_000, .inf)
// are kept as strings and rejected by the typed decoder with a clear message.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// yaml11Octal matches YAML 1.1's octal integers (a leading zero, then octal digits).
var yaml11Octal = regexp.MustCompile(`^[-+]?0[0-7]+$`)

func scalarValue(n *yaml.Node) *value {
	v := &value{kind: kindScalar, line: n.Line}
	switch n.ShortTag() {
	case "!!null":
		v.kind = kindNull
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			v.scalar = n.Value
		} else {
			v.scalar = b
		}
	case "!!int", "!!float":
		if yaml11Octal.MatchString(n.Value) {
			// 0777 is octal in YAML 1.1, which Kubernetes' reader (kubectl, the API
			// server) follows, so a file mode written as 0644 means 420.
			o, err := strconv.ParseInt(n.Value, 8, 64)
			if err == nil {
				v.scalar = json.Number(strconv.FormatInt(o, 10))
				return v
			}
		}
		if jsonNumber.MatchString(n.Value) {
			v.scalar = json.Number(n.Value)
		} else {
			v.scalar = n.Value
		}
	default:
		v.scalar = n.Value
	}
	return v
}

// toJSON converts the value into plain Go values for encoding/json.
func (v *value) toJSON() any {
	switch v.kind {
	case kindObject:
		m := make(map[string]any, len(v.fields))
		for k, f := range v.fields {
			m[k] = f.toJSON()
		}
		return m
	case kindArray:
		a := make([]any, len(v.items))
		for i, it := range v.items {
			a[i] = it.toJSON()
		}
		return a
	case kindScalar:
		return v.scalar
	}
	return nil
}

// field returns member k of an object value, or nil.
func (v *value) field(k string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	return v.fields[k]
}

// str returns the string scalar at key k of an object value, or "".
func (v *value) str(k string) string {
	f := v.field(k)
	if f == nil || f.kind != kindScalar {
		return ""
	}
	s, _ := f.scalar.(string)
	return s
}

// describe names a value's type for "wrong type" messages.
func (v *value) describe() string {
	switch v.kind {
	case kindScalar:
		switch s := v.scalar.(type) {
		case bool:
			return fmt.Sprintf("boolean %v", s)
		case json.Number:
			return "number " + string(s)
		case string:
			if len(s) > 40 {
				s = s[:40] + "..."
			}
			return fmt.Sprintf("string %q", s)
		}
	case kindObject:
		return "an object"
	case kindArray:
		return "a list"
	}
	return "null"
}

// joinKey appends an object key to a path: plain keys as ".key", others as [key].
func joinKey(path, key string) string {
	if key != "" && !strings.ContainsAny(key, "./[] ") {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + key + "]"
}

// joinIndex appends an array index to a path.
func joinIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// lineMap records the line of every path below v.
func (v *value) lineMap(path string, out map[string]int) {
	if v == nil {
		return
	}
	if _, ok := out[path]; !ok {
		out[path] = v.line
	}
	switch v.kind {
	case kindObject:
		for _, k := range v.keys {
			v.fields[k].lineMap(joinKey(path, k), out)
		}
	case kindArray:
		for i, it := range v.items {
			it.lineMap(joinIndex(path, i), out)
		}
	}
}

// document is one YAML/JSON document of a file.
type document struct {
	file string
	line int
	v    *value
}

// yamlLine pulls the line number out of a yaml.v3 error ("yaml: line 7: ...").
var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseDocuments splits data into documents. A syntax error ends the file (the parser
// cannot resynchronise) and is returned with its line; the documents before it are kept.
func parseDocuments(file string, data []byte) (docs []document, perr *Error) {
	defer func() {
		// The YAML parser is third-party code fed with arbitrary input: a panic in it
		// must become an error naming the file, never a crash of the loader.
		if r := recover(); r != nil {
			perr = &Error{Source: srcOf(file, 0), Msg: fmt.Sprintf("cannot parse: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			line := 1 // yaml.v3 leaves the line out of errors on the first line
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			msg = yamlLine.ReplaceAllString(msg, "")
			msg = strings.TrimLeft(msg, ": ")
			return docs, &Error{Source: srcOf(file, line), Msg: "invalid YAML/JSON: " + msg}
		}
		var c converter
		v, cerr := c.convert(&n, 0)
		if cerr != nil {
			line := n.Line
			if m := yamlLine.FindStringSubmatch(cerr.Error()); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			msg := strings.TrimLeft(yamlLine.ReplaceAllString(cerr.Error(), ""), ": ")
			return docs, &Error{Source: srcOf(file, line), Msg: "invalid YAML/JSON: " + msg}
		}
		if v.kind == kindNull {
			continue // empty document, e.g. a trailing "---"
		}
		docs = append(docs, document{file: file, line: v.line, v: v})
	}
}
