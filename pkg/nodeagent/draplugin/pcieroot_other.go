//go:build !linux

package draplugin

import "errors"

// SysfsPCIeRoot needs Linux's sysfs; elsewhere the inventory groups GPUs by the device
// model's PCIe switches.
func SysfsPCIeRoot(string) (string, error) {
	return "", errors.New("the PCIe root is read from Linux's sysfs")
}
