package migparted

import (
	yaml "go.yaml.in/yaml/v3"
)

// parseEntry reads one entry of a named config.
func parseEntry(a at, n *yaml.Node) (Entry, error) {
	e := Entry{Line: n.Line}
	fields, err := mappingFields(a, n)
	if err != nil {
		return e, err
	}
	if err := requireFields(a, n, fields, "devices", "mig-enabled"); err != nil {
		return e, err
	}
	hasDevices := false
	for _, f := range fields {
		fa := a.inField(f.key)
		switch f.key {
		case "device-filter":
			err = e.deviceFilter(fa, f.value)
		case "devices":
			err = e.devices(fa, f.value)
		case "mig-enabled":
			var ok bool
			if e.MIGEnabled, ok = scalarBool(f.value); !ok {
				err = fa.errorf(f.value.Line, "want true or false, got %s", kindName(f.value))
			}
		case "mig-devices":
			hasDevices = true
			err = e.migDevices(fa, f.value)
		default:
			err = fa.errorf(f.line, "unknown field (want device-filter, devices, mig-enabled, mig-devices)")
		}
		if err != nil {
			return e, err
		}
	}
	return e, e.checkMIG(a.inField("mig-devices"), n.Line, hasDevices)
}

// checkMIG applies mig-parted's rules tying mig-enabled to mig-devices.
func (e Entry) checkMIG(a at, line int, hasDevices bool) error {
	if e.MIGEnabled && !hasDevices {
		return a.errorf(line, "missing while mig-enabled is true (write {} for MIG on without instances)")
	}
	if !e.MIGEnabled && len(e.MIGDevices) > 0 {
		return a.errorf(line, "lists instances while mig-enabled is false")
	}
	return nil
}

// deviceFilter reads one PCI device ID or a list of them.
func (e *Entry) deviceFilter(a at, n *yaml.Node) error {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			return a.errorf(n.Line, "empty list (leave the field out to select every GPU)")
		}
	}
	for _, item := range items {
		s, ok := scalarString(resolveAlias(item))
		if !ok {
			return a.errorf(item.Line, "want a PCI device ID such as \"0x20B010DE\" or a list of them, got %s", kindName(item))
		}
		id, err := ParseDeviceID(s)
		if err != nil {
			return a.errorf(item.Line, "%v", err)
		}
		e.DeviceFilter = append(e.DeviceFilter, id)
	}
	return nil
}

// devices reads "all" or a list of distinct, non-negative GPU indexes.
func (e *Entry) devices(a at, n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if n.Value != "all" {
			return a.errorf(n.Line, "want \"all\" or a list of GPU indexes, got %q", n.Value)
		}
		e.AllDevices = true
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return a.errorf(n.Line, "want \"all\" or a list of GPU indexes, got %s", kindName(n))
	}
	seen := map[int]bool{}
	for _, item := range n.Content {
		i, ok := scalarInt(resolveAlias(item))
		if !ok || i < 0 {
			return a.errorf(item.Line, "want a GPU index (0, 1, ...), got %s", kindName(item))
		}
		if seen[i] {
			return a.errorf(item.Line, "GPU %d listed twice", i)
		}
		seen[i] = true
		e.Devices = append(e.Devices, i)
	}
	return nil
}

// migDevices reads the profile -> count mapping. Counts are non-negative and, when any
// profile is listed, not all zero (as mig-parted requires).
func (e *Entry) migDevices(a at, n *yaml.Node) error {
	fields, err := mappingFields(a, n)
	if err != nil {
		return err
	}
	e.MIGDevices = make(map[string]int, len(fields))
	total := 0
	for _, f := range fields {
		pa := a.inField("mig-devices[" + quote(f.key) + "]")
		if err := checkProfileFormat(f.key); err != nil {
			return pa.errorf(f.line, "%v", err)
		}
		count, ok := scalarInt(f.value)
		if !ok || count < 0 {
			return pa.errorf(f.value.Line, "want an instance count (0, 1, ...), got %s", kindName(f.value))
		}
		e.MIGDevices[f.key] = count
		total += count
	}
	if len(fields) > 0 && total == 0 {
		return a.errorf(n.Line, "every count is 0 (write {} for MIG on without instances)")
	}
	return nil
}

func quote(s string) string { return "\"" + s + "\"" }
