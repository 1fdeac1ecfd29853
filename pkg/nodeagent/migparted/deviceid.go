package migparted

import (
	"fmt"
	"strconv"
	"strings"
)

// DeviceID is a device-filter value: the PCI device and vendor IDs packed as NVML
// reports them (PciInfo.PciDeviceId, device<<16 | vendor: 0x20B010DE is an A100-SXM4-40GB),
// optionally qualified by the subsystem IDs ("0x20B010DE:0x134F10DE").
type DeviceID struct {
	ID           uint32
	Subsystem    uint32
	HasSubsystem bool
}

// ParseDeviceID reads "0x20B010DE" or "0x20B010DE:0x134F10DE".
func ParseDeviceID(s string) (DeviceID, error) {
	primary, sub, hasSub := strings.Cut(strings.TrimSpace(s), ":")
	id, err := parseHex32(primary)
	if err != nil {
		return DeviceID{}, fmt.Errorf("PCI device ID %q: %w", s, err)
	}
	d := DeviceID{ID: id}
	if hasSub {
		if d.Subsystem, err = parseHex32(sub); err != nil {
			return DeviceID{}, fmt.Errorf("PCI subsystem ID in %q: %w", s, err)
		}
		d.HasSubsystem = true
	}
	return d, nil
}

// parseHex32 reads a 0x-prefixed 32-bit hexadecimal number.
func parseHex32(s string) (uint32, error) {
	digits, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	if !ok || digits == "" {
		return 0, fmt.Errorf("want 0x followed by 8 hexadecimal digits (device then vendor)")
	}
	v, err := strconv.ParseUint(digits, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("want 0x followed by at most 8 hexadecimal digits")
	}
	return uint32(v), nil
}

// Matches reports whether a GPU with PCI ID id and subsystem ID subsystem passes the
// filter; a filter without subsystem ignores the GPU's.
func (d DeviceID) Matches(id, subsystem uint32) bool {
	return d.ID == id && (!d.HasSubsystem || d.Subsystem == subsystem)
}

func (d DeviceID) String() string {
	if d.HasSubsystem {
		return fmt.Sprintf("0x%08X:0x%08X", d.ID, d.Subsystem)
	}
	return fmt.Sprintf("0x%08X", d.ID)
}
