package k8s

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// writeMap writes key: followed by m's entries, sorted, one per line at indent, values
// quoted; nothing when m is empty.
func writeMap(s *strings.Builder, key string, m map[string]string, indent string) {
	if len(m) == 0 {
		return
	}
	s.WriteString(key + ":\n")
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(s, "%s%s: %q\n", indent, k, m[k])
	}
}

// set stores k=v in *m, making the map on first use.
func set(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

// copyMap copies m; nil stays nil.
func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
