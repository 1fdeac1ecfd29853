package draplugin

import (
	"strings"

	"k8s.io/dynamic-resource-allocation/deviceattribute"
)

// SysfsPCIeRoot reads a GPU's PCIe root complex from sysfs, as Kubernetes' standard
// resource.kubernetes.io/pcieRoot attribute spells it.
func SysfsPCIeRoot(busID string) (string, error) {
	a, err := deviceattribute.GetPCIeRootAttributeByPCIBusID(strings.ToLower(busID))
	if err != nil {
		return "", err
	}
	return *a.Value.StringValue, nil
}
