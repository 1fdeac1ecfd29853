package migparted

import (
	_ "embed" // the shipped default config
)

// DefaultFile is the name Default's errors carry.
const DefaultFile = "config-default.yaml"

//go:embed config-default.yaml
var defaultConfig []byte

// DefaultYAML returns the shipped default config file (a copy: callers may change it).
// It is also config/nodeagent/mig-config.yaml's ConfigMap data; a test keeps the two equal.
func DefaultYAML() []byte { return append([]byte(nil), defaultConfig...) }

// Default parses the shipped default config: all-disabled, all-enabled (MIG on, no
// instances), all-balanced and all-<profile> for every profile of the catalog's MIG
// models, with device filters where models share a profile name but not its count.
func Default() (*Spec, error) { return Parse(DefaultFile, defaultConfig) }
