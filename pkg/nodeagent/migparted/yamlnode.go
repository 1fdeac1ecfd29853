package migparted

import (
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// field is one key of a YAML mapping with its value.
type field struct {
	key   string
	line  int
	value *yaml.Node
}

// mappingFields lists a mapping's fields in order, refusing other kinds and repeated
// keys (a repeated key would silently drop one of the values).
func mappingFields(a at, n *yaml.Node) ([]field, error) {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return nil, a.errorf(n.Line, "want a mapping, got %s", kindName(n))
	}
	seen := map[string]bool{}
	out := make([]field, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, a.errorf(k.Line, "want a string key, got %s", kindName(k))
		}
		if seen[k.Value] {
			return nil, a.errorf(k.Line, "key %q appears twice", k.Value)
		}
		seen[k.Value] = true
		out = append(out, field{key: k.Value, line: k.Line, value: v})
	}
	return out, nil
}

// requireFields names the first of want missing from fields.
func requireFields(a at, n *yaml.Node, fields []field, want ...string) error {
	for _, w := range want {
		found := false
		for _, f := range fields {
			found = found || f.key == w
		}
		if !found {
			return a.inField(w).errorf(n.Line, "missing")
		}
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// kindName describes a node for errors ("a list", "the integer 3", ...).
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		}
		return fmt.Sprintf("%s %s", n.Tag[2:], n.Value)
	}
	return "an unexpected node"
}

// scalarString reads a string (a 0x number is kept as written, for device IDs).
func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		return "", false
	}
	return n.Value, true
}

func scalarBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, false
	}
	v, err := strconv.ParseBool(n.Value)
	return v, err == nil
}

func scalarInt(n *yaml.Node) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	return int(v), err == nil
}
