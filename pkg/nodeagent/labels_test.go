package nodeagent

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"k8s.io/apimachinery/pkg/util/validation"
)

// labelNode is a discovery of count GPUs of a catalog model, each with the MIG
// profiles given (starts are irrelevant to labels).
func labelNode(t *testing.T, product string, count int, profiles ...string) *Discovery {
	t.Helper()
	m, err := devices.LookupModel(product)
	if err != nil {
		t.Fatal(err)
	}
	d := &Discovery{Model: m, Product: product, DriverVersion: "580.65.06", CUDAMajor: 13, CUDAMinor: 0, MIGCapable: m.MIG != nil}
	for i := range count {
		g := GPUInfo{GPU: devices.GPU{Index: i, Model: m.ID}, Memory: m.Memory - 512, MIGEnabled: len(profiles) > 0}
		for _, p := range profiles {
			g.MIG = append(g.MIG, MIGDevice{Instance: devices.Instance{Profile: p}})
		}
		d.GPUs = append(d.GPUs, g)
	}
	return d
}

func TestLabelsGFDSet(t *testing.T) {
	mixed := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}
	tests := []struct {
		name    string
		d       func(*testing.T) *Discovery
		sharing devices.Sharing
		facts   Facts
		want    map[string]string // "" value: must be absent
	}{
		{name: "H100 exclusive", d: func(t *testing.T) *Discovery { return labelNode(t, "NVIDIA-H100-80GB-HBM3", 8) },
			facts: Facts{MachineType: "DGX H100 (SXM5)"},
			want: map[string]string{"nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0",
				"nvidia.com/gpu.machine": "DGX-H100-SXM5", "nvidia.com/mps.capable": "false", "nvidia.com/gpu.count": "8",
				"nvidia.com/cuda.driver-version.major": "580", "nvidia.com/cuda.driver-version.revision": "06",
				"nvidia.com/cuda.runtime-version.major": "13", "nvidia.com/mig.strategy": ""}},
		{name: "L4 is ada-lovelace, machine unknown", d: func(t *testing.T) *Discovery { return labelNode(t, "NVIDIA-L4", 1) },
			want: map[string]string{"nvidia.com/gpu.family": "ada-lovelace", "nvidia.com/gpu.compute.minor": "9", "nvidia.com/gpu.machine": "unknown"}},
		{name: "NVML's capability wins over the catalog", d: func(t *testing.T) *Discovery { return labelNode(t, "NVIDIA-L4", 1) },
			facts: Facts{ComputeMajor: 12, ComputeMinor: 0},
			want:  map[string]string{"nvidia.com/gpu.family": "blackwell", "nvidia.com/gpu.compute.major": "12"}},
		{name: "generic GPU: undefined family, no capability", d: func(t *testing.T) *Discovery {
			d := labelNode(t, "NVIDIA-L4", 1)
			d.Model, _ = devices.GenericModel("NVIDIA-X9", 65536)
			return d
		}, want: map[string]string{"nvidia.com/gpu.family": "undefined", "nvidia.com/gpu.compute.major": ""}},
		{name: "MPS is mps.capable", d: func(t *testing.T) *Discovery { return labelNode(t, "NVIDIA-H100-80GB-HBM3", 2) },
			sharing: devices.Sharing{Mode: devices.MPS, Replicas: 4},
			want:    map[string]string{"nvidia.com/mps.capable": "true", "nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED"}},
		{name: "MIG mixed B200 with +me: dotted names, every attribute", d: func(t *testing.T) *Discovery {
			return labelNode(t, "NVIDIA-B200", 2, "1g.23gb+me", "1g.23gb", "3g.90gb")
		}, sharing: mixed,
			facts: Facts{MIG: map[string]MIGAttributes{"1g.23gb+me": {Multiprocessors: 18, ComputeInstanceSlices: 1, CopyEngines: 1, Decoders: 1, Encoders: 1, JPEGDecoders: 1, OFAs: 1}}},
			want: map[string]string{"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.family": "blackwell", "nvidia.com/gpu.compute.major": "10",
				"nvidia.com/mig-1g.23gb.me.count": "2", "nvidia.com/mig-1g.23gb.me.product": "NVIDIA-B200-MIG-1g.23gb.me",
				"nvidia.com/mig-1g.23gb.me.replicas": "1", "nvidia.com/mig-1g.23gb.me.sharing-strategy": "none",
				"nvidia.com/mig-1g.23gb.me.memory": "23552", "nvidia.com/mig-1g.23gb.me.multiprocessors": "18",
				"nvidia.com/mig-1g.23gb.me.slices.gi": "1", "nvidia.com/mig-1g.23gb.me.slices.ci": "1",
				"nvidia.com/mig-1g.23gb.me.engines.copy": "1", "nvidia.com/mig-1g.23gb.me.engines.decoder": "1",
				"nvidia.com/mig-1g.23gb.me.engines.encoder": "1", "nvidia.com/mig-1g.23gb.me.engines.jpeg": "1",
				"nvidia.com/mig-1g.23gb.me.engines.ofa": "1",
				"nvidia.com/mig-3g.90gb.count":          "2", "nvidia.com/mig-3g.90gb.slices.gi": "3", "nvidia.com/mig-3g.90gb.slices.ci": "3",
				// Without NVML's attributes no engine counts are invented.
				"nvidia.com/mig-3g.90gb.multiprocessors": "", "nvidia.com/mig-3g.90gb.engines.copy": ""}},
		{name: "MIG single A100 1g.5gb: NVML memory, product renamed", d: func(t *testing.T) *Discovery {
			return labelNode(t, "NVIDIA-A100-SXM4-40GB", 8, "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb")
		}, sharing: devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle},
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/gpu.count": "56",
				"nvidia.com/gpu.memory": "4864", "nvidia.com/gpu.slices.gi": "1", "nvidia.com/mig-1g.5gb.count": ""}},
		{name: "MIG single +me profile uses the dotted product", d: func(t *testing.T) *Discovery {
			return labelNode(t, "NVIDIA-A100-SXM4-40GB", 1, "1g.5gb+me")
		}, sharing: devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle},
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb.me"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d(t)
			d.Facts = tc.facts
			got := Labels(d, tc.sharing)
			for k, v := range tc.want {
				if g, ok := got[k]; v == "" && ok || v != "" && g != v {
					t.Errorf("label %s = %q (present %v), want %q", k, g, ok, v)
				}
			}
			assertValidLabels(t, got)
		})
	}
}

// Every label Gantry writes is a valid Kubernetes label, for every MIG profile of every
// catalog model under the mixed and the single strategy.
func TestLabelsValidForEveryProfile(t *testing.T) {
	full := Facts{MachineType: strings.Repeat("Very Long Machine Name ", 5), MIG: map[string]MIGAttributes{}}
	for _, m := range devices.Models() {
		for _, p := range m.ProfileNames() {
			full.MIG[p] = MIGAttributes{Multiprocessors: 1, CopyEngines: 1}
			for _, product := range m.Products {
				d := labelNode(t, product, 1, p)
				d.Facts = full
				for _, st := range []devices.MIGStrategy{devices.MIGMixed, devices.MIGSingle} {
					l := Labels(d, devices.Sharing{Mode: devices.MIG, MIGStrategy: st})
					assertValidLabels(t, l)
				}
			}
		}
	}
}

func assertValidLabels(t *testing.T, l map[string]string) {
	t.Helper()
	for k, v := range l {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("label key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s value %q: %v", k, v, errs)
		}
	}
}
