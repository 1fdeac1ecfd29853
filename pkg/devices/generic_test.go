package devices_test

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A generic model's ID reads back into the same model wherever it is looked up.
func TestGenericModelRoundTrip(t *testing.T) {
	tests := []struct {
		product string
		mem     resources.MiB
		wantID  devices.ModelID
	}{
		{"NVIDIA-X200", 98304, "generic-98304Mi-NVIDIA-X200"},
		{"", 16384, "generic-16384Mi"},
		{"NVIDIA-A2-Mi-Edition", 15360, "generic-15360Mi-NVIDIA-A2-Mi-Edition"},
	}
	for _, tc := range tests {
		m, err := devices.GenericModel(tc.product, tc.mem)
		if err != nil || m.ID != tc.wantID || !m.IsGeneric() || m.MIG != nil || m.GFDFamily() != "undefined" {
			t.Fatalf("GenericModel(%q, %d) = %+v, %v", tc.product, tc.mem, m, err)
		}
		back, err := devices.LookupModel(string(m.ID))
		if err != nil || back.ID != m.ID || back.Memory != tc.mem {
			t.Fatalf("LookupModel(%s) = %+v, %v", m.ID, back, err)
		}
	}
	if _, err := devices.GenericModel("NVIDIA-X200", 0); err == nil {
		t.Fatal("a generic model without memory must be an error")
	}
	if m, _ := devices.LookupModel("H100"); m.IsGeneric() {
		t.Fatal("catalog models are not generic")
	}
}

func TestCloudMappings(t *testing.T) {
	gke := map[string]devices.ModelID{"nvidia-tesla-a100": "A100-SXM4-40GB", "nvidia-h100-80gb": "H100-SXM5-80GB",
		"nvidia-l4": "L4", "NVIDIA-TESLA-T4": "T4", "nvidia-b200": "B200-180GB", "nvidia-a100-80gb": "A100-SXM4-80GB"}
	for accel, want := range gke {
		if m, ok := devices.ModelForGKEAccelerator(accel); !ok || m.ID != want {
			t.Errorf("GKE %s = %s, %v; want %s", accel, m.ID, ok, want)
		}
	}
	if _, ok := devices.ModelForGKEAccelerator("nvidia-tesla-k80"); ok {
		t.Error("K80 is not in the catalog")
	}
	types := []struct {
		it    string
		want  devices.ModelID
		count int
	}{
		{"p4d.24xlarge", "A100-SXM4-40GB", 8}, {"p5.48xlarge", "H100-SXM5-80GB", 8}, {"g5.xlarge", "A10G", 1},
		{"g5.12xlarge", "A10G", 4}, {"g6e.48xlarge", "L40S", 8}, {"g4dn.12xlarge", "T4", 4}, {"g4dn.16xlarge", "T4", 1},
		{"Standard_ND96asr_v4", "A100-SXM4-40GB", 8}, {"Standard_ND96isr_H100_v5", "H100-SXM5-80GB", 8},
		{"a3-highgpu-8g", "H100-SXM5-80GB", 8}, {"p6-b200.48xlarge", "B200-180GB", 8},
	}
	for _, tc := range types {
		if m, n, ok := devices.GPUsForInstanceType(tc.it); !ok || m.ID != tc.want || n != tc.count {
			t.Errorf("%s = %s x%d, %v; want %s x%d", tc.it, m.ID, n, ok, tc.want, tc.count)
		}
	}
	if _, _, ok := devices.GPUsForInstanceType("m5.large"); ok {
		t.Error("m5.large has no GPU")
	}
}
