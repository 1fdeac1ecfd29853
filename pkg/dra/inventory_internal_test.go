package dra

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// Every catalog profile has NVML's GPU-instance profile ID, so no published name falls
// back to a number NVIDIA's driver would not write.
func TestEveryCatalogProfileHasAGIProfileID(t *testing.T) {
	for _, m := range devices.MIGModels() {
		for _, p := range m.MIG.Profiles {
			if id := giProfileID(m, p.Name); id >= unknownGIProfileBase {
				t.Errorf("%s %s: no NVML GPU-instance profile ID", m.ID, p.Name)
			}
		}
	}
}

func TestParseDeviceName(t *testing.T) {
	cases := []struct {
		name string
		want parsedName
		ok   bool
	}{
		{"gpu-0", parsedName{gpu: 0}, true},
		{"gpu-12", parsedName{gpu: 12}, true},
		{"gpu-3-mig-1g10gb-19-4", parsedName{gpu: 3, mig: true, start: 4}, true},
		{"gpu-3-mig-1g10gb-me-20-6", parsedName{gpu: 3, mig: true, start: 6}, true},
		{"gpu-1-mig-19-5-1", parsedName{gpu: 1, mig: true, start: 5}, true}, // before driver 25.8
		{"gpu-1-mig-9-4-4", parsedName{gpu: 1, mig: true, start: 4}, true},
		{"gpu-vfio-0", parsedName{}, false},
		{"gpu-", parsedName{}, false},
		{"gpu-+1", parsedName{}, false},
		{"gpu-1-mig-19-x", parsedName{}, false},
		{"gpu-1-mig-1g10gb-19-", parsedName{}, false},
		{"gpu-1-mig--1", parsedName{}, false},
		{"cpu-0", parsedName{}, false},
	}
	for _, tc := range cases {
		got, ok := parseDeviceName(tc.name)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseDeviceName(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
