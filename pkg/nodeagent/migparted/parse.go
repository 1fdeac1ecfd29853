package migparted

import (
	"fmt"
	"os"

	yaml "go.yaml.in/yaml/v3"
)

// Load reads and parses the config file at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mig-parted config: %w", err)
	}
	return Parse(path, data)
}

// LoadOrDefault reads the config file at path, or the embedded default configs when
// path is empty.
func LoadOrDefault(path string) (*Spec, error) {
	if path == "" {
		return Default()
	}
	return Load(path)
}

// Parse reads a mig-parted config file; file names it in errors.
func Parse(file string, data []byte) (*Spec, error) {
	a := at{file: file, entry: -1}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, a.errorf(0, "not YAML: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, a.errorf(0, "empty file: want version %s and mig-configs", Version)
	}
	fields, err := mappingFields(a, doc.Content[0])
	if err != nil {
		return nil, err
	}
	if err := requireFields(a, doc.Content[0], fields, "version", "mig-configs"); err != nil {
		return nil, err
	}
	spec := &Spec{File: file, Configs: map[string]Config{}}
	for _, f := range fields {
		if err := spec.topField(a.inField(f.key), f); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// topField reads one top-level field.
func (s *Spec) topField(a at, f field) error {
	switch f.key {
	case "version":
		if f.value.Kind != yaml.ScalarNode || f.value.Value != Version {
			return a.errorf(f.value.Line, "unsupported version %q: want %s", f.value.Value, Version)
		}
		return nil
	case "mig-configs":
		return s.configs(a, f.value)
	}
	return a.errorf(f.line, "unknown field (want version, mig-configs)")
}

// configs reads the mig-configs mapping: name -> non-empty list of entries.
func (s *Spec) configs(a at, n *yaml.Node) error {
	fields, err := mappingFields(a, n)
	if err != nil {
		return err
	}
	if len(fields) == 0 {
		return a.errorf(n.Line, "no configs")
	}
	for _, f := range fields {
		c, err := parseConfig(a.inConfig(f.key), f)
		if err != nil {
			return err
		}
		if IsDynamic(f.key) {
			if err := checkDynamic(a.inConfig(f.key), c); err != nil {
				return err
			}
		}
		s.Configs[f.key] = c
	}
	return nil
}

func parseConfig(a at, f field) (Config, error) {
	c := Config{Name: f.key, Line: f.line}
	if f.key == "" {
		return c, a.errorf(f.line, "empty config name")
	}
	if f.value.Kind != yaml.SequenceNode {
		return c, a.errorf(f.value.Line, "want a list of entries, got %s", kindName(f.value))
	}
	if len(f.value.Content) == 0 {
		return c, a.errorf(f.value.Line, "no entries")
	}
	for i, item := range f.value.Content {
		e, err := parseEntry(a.inEntry(i), item)
		if err != nil {
			return c, err
		}
		c.Entries = append(c.Entries, e)
	}
	return c, nil
}
