package pluginconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Config is what the node agent takes from the file.
type Config struct {
	// Sharing is the sharing the file asks for: exclusive when it shares nothing.
	Sharing devices.Sharing
	// MIGStrategySet says the file chose flags.migStrategy (else the agent's flag stands).
	MIGStrategySet bool
	// Warnings name the fields read but not acted on, one line each.
	Warnings []string
}

// Load reads the config file at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("device-plugin config: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a device-plugin config file; name names it in errors.
func Parse(name string, data []byte) (Config, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("%s: empty file: want version %s", name, Version)
		}
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	var tree yaml.Node
	_ = yaml.Unmarshal(data, &tree) // decoded above, so it parses
	p := parser{name: name, tree: &tree}
	return p.config(f)
}

// parser turns the decoded file into a Config, with lines from the node tree.
type parser struct {
	name string
	tree *yaml.Node
}

func (p parser) errorf(path []string, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", p.name, lineOf(p.tree, path), strings.Join(path, "."), fmt.Sprintf(format, args...))
}

func (p parser) config(f file) (Config, error) {
	var c Config
	if f.Version != Version {
		return c, p.errorf([]string{"version"}, "unsupported version %q: want %s", f.Version, Version)
	}
	if f.Resources.Kind != 0 {
		return c, p.errorf([]string{"resources"}, "renaming GPUs and MIG devices by product pattern is not supported: Gantry advertises NVIDIA's default names (nvidia.com/gpu, nvidia.com/mig-<profile>)")
	}
	s, err := p.sharing(f.Sharing)
	if err != nil {
		return c, err
	}
	if err := p.migStrategy(f.Flags.MigStrategy, &s, &c); err != nil {
		return c, err
	}
	c.Sharing = s
	c.Warnings = p.unusedFlags(f.Flags)
	return c, nil
}

// migStrategy maps flags.migStrategy: none keeps MIG devices unadvertised as in
// NVIDIA's plugin, which Gantry cannot serve, so it means whole GPUs only.
func (p parser) migStrategy(v *string, s *devices.Sharing, c *Config) error {
	if v == nil {
		return nil
	}
	switch *v {
	case "none":
	case "single", "mixed":
		s.MIGStrategy = devices.MIGStrategy(*v)
	default:
		return p.errorf([]string{"flags", "migStrategy"}, "unknown strategy %q: want none, single or mixed", *v)
	}
	c.MIGStrategySet = true
	return nil
}

// sharing maps sharing.timeSlicing or sharing.mps (not both, as NVIDIA's plugin).
func (p parser) sharing(in sharingSpec) (devices.Sharing, error) {
	s := devices.Sharing{Mode: devices.Exclusive}
	ts := in.TimeSlicing != nil && len(in.TimeSlicing.Resources) > 0
	mps := in.MPS != nil && len(in.MPS.Resources) > 0
	var mode devices.SharingMode
	var spec *replicaSpec
	var key string
	switch {
	case ts && mps:
		return s, p.errorf([]string{"sharing"}, "timeSlicing and mps both replicate resources: choose one")
	case mps:
		mode, spec, key = devices.MPS, in.MPS, "mps"
	case ts:
		mode, spec, key = devices.TimeSlicing, in.TimeSlicing, "timeSlicing"
	default:
		return s, nil
	}
	s.Mode, s.RenameByDefault, s.FailRequestsGreaterThanOne = mode, spec.RenameByDefault, spec.FailRequestsGreaterThanOne
	for i, r := range spec.Resources {
		path := []string{"sharing", key, "resources", strconv.Itoa(i)}
		rr, err := p.resource(path, r)
		if err != nil {
			return s, err
		}
		s.Resources = append(s.Resources, rr)
	}
	return s, nil
}

func (p parser) resource(path []string, r replicaResource) (devices.ReplicatedResource, error) {
	out := devices.ReplicatedResource{Name: resources.Name(r.Name), Rename: resources.Name(r.Rename), Replicas: r.Replicas}
	if r.Name == "" {
		return out, p.errorf(append(path, "name"), "missing: the resource to replicate (nvidia.com/gpu or nvidia.com/mig-<profile>)")
	}
	if r.Replicas < 1 {
		return out, p.errorf(append(path, "replicas"), "%d: want at least 1", r.Replicas)
	}
	if prof, ok := out.Name.MIGProfile(); ok {
		out.Name = resources.MIGResource(prof) // "+me" written either way
	}
	devs, count, err := deviceSelector(&r.Devices)
	if err != nil {
		return out, p.errorf(append(path, "devices"), "%v", err)
	}
	out.Devices, out.DeviceCount = devs, count
	return out, nil
}

// deviceSelector reads devices: "all", a count, or a list of indexes and UUIDs.
func deviceSelector(n *yaml.Node) ([]string, int, error) {
	if n.Kind == 0 {
		return nil, 0, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "all" {
			return nil, 0, nil
		}
		k, err := strconv.Atoi(n.Value)
		if err != nil || k < 1 {
			return nil, 0, fmt.Errorf("%q: want all, a positive count, or a list of indexes and UUIDs", n.Value)
		}
		return nil, k, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode || e.Value == "" {
				return nil, 0, fmt.Errorf("line %d: want an index (0, 1:0) or a UUID", e.Line)
			}
			out = append(out, e.Value)
		}
		if len(out) == 0 {
			return nil, 0, errors.New("empty list: leave devices out to replicate every device")
		}
		return out, 0, nil
	}
	return nil, 0, errors.New("want all, a count, or a list")
}

// unusedFlags names every flag set that the node agent does not act on.
func (p parser) unusedFlags(f flags) []string {
	var out []string
	note := func(set bool, field, why string) {
		if set {
			out = append(out, fmt.Sprintf("%s:%d: flags.%s: ignored: %s", p.name, lineOf(p.tree, append([]string{"flags"}, strings.Split(field, ".")...)), field, why))
		}
	}
	note(f.FailOnInitError != nil, "failOnInitError", "the node agent always fails when NVML cannot start")
	note(f.GFD.Kind != 0, "gfd", "the node agent labels the node itself")
	if pl := f.Plugin; pl != nil {
		runtime := "devices reach containers through NVIDIA_VISIBLE_DEVICES (the NVIDIA container runtime's default)"
		note(pl.PassDeviceSpecs != nil, "plugin.passDeviceSpecs", runtime)
		note(pl.DeviceListStrategy.Kind != 0, "plugin.deviceListStrategy", runtime)
		note(pl.DeviceIDStrategy != nil, "plugin.deviceIDStrategy", "containers get UUIDs")
		note(pl.CDIAnnotationPrefix != nil, "plugin.cdiAnnotationPrefix", runtime)
		note(pl.NvidiaCTKPath != nil, "plugin.nvidiaCTKPath", runtime)
		note(pl.NvidiaDevRoot != nil, "plugin.nvidiaDevRoot", runtime)
		note(pl.ContainerDriverRoot != nil, "plugin.containerDriverRoot", runtime)
		note(pl.GDSEnabled != nil, "plugin.gdsEnabled", "GPUDirect Storage devices are not passed")
		note(pl.MOFEDEnabled != nil, "plugin.mofedEnabled", "MOFED devices are not passed")
	}
	return out
}

// lineOf is the line of the node at path (mapping keys and sequence indexes), or of its
// deepest existing ancestor.
func lineOf(root *yaml.Node, path []string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, key := range path {
		next := child(n, key)
		if next == nil {
			break
		}
		n, line = next, next.Line
	}
	return line
}

func child(n *yaml.Node, key string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}
