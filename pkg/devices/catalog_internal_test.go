package devices

import "testing"

func TestCatalogNamesAreUnambiguous(t *testing.T) {
	seen := map[string]ModelID{}
	for _, m := range Models() {
		for _, n := range m.names() {
			k := normalizeModelName(n)
			if other, dup := seen[k]; dup && other != m.ID {
				t.Errorf("name %q maps to both %s and %s", n, other, m.ID)
			}
			seen[k] = m.ID
		}
	}
}
