package nodeagent_test

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// On a node configured all-dynamic, discovery gives every GPU the dynamic sharing and
// no instances, whether MIG mode is off or instances carved for prepared claims are
// there; a node with a fixed MIG configuration advertises the same carved instance as
// its layout.
func TestDiscoverDynamicMIGListsNoInstances(t *testing.T) {
	dynamic := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
	fixed := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}
	carved := devices.Instance{Profile: "3g.20gb", Start: 4}
	tests := []struct {
		name          string
		sharing       devices.Sharing
		carve         bool
		wantDynamic   bool
		wantInstances int // on GPU 0
		wantMIGOn     bool
	}{
		{"dynamic, MIG mode off", dynamic, false, true, 0, false},
		{"dynamic, an instance carved for a claim", dynamic, true, true, 0, true},
		{"fixed MIG, the same instance", fixed, true, false, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t).Sharing(tc.sharing)
			if tc.carve {
				m, err := devices.LookupModel("A100-SXM4-40GB")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := nodeagent.CreateMIGDevice(b.Server(), m, 0, carved); err != nil {
					t.Fatal(err)
				}
			}
			d := b.Discover()
			g := d.GPUs[0]
			if g.Sharing.DynamicMIG() != tc.wantDynamic || len(g.Instances) != tc.wantInstances || g.MIGEnabled != tc.wantMIGOn {
				t.Errorf("GPU 0: dynamic %t, %d instances %v, MIG on %t; want %t, %d, %t",
					g.Sharing.DynamicMIG(), len(g.Instances), g.Instances, g.MIGEnabled, tc.wantDynamic, tc.wantInstances, tc.wantMIGOn)
			}
			if tc.wantDynamic && len(g.MIG) != 0 {
				t.Errorf("GPU 0 lists MIG devices %v on a dynamic GPU", g.MIG)
			}
			gpus := make([]devices.GPU, len(d.GPUs))
			for i := range d.GPUs {
				gpus[i] = d.GPUs[i].GPU
			}
			nd, err := devices.NewNodeDevices(gpus)
			if err != nil {
				t.Fatalf("the device model refuses the discovered GPUs: %v", err)
			}
			if tc.wantDynamic && len(nd.DynamicGPUs()) != len(gpus) {
				t.Errorf("%d dynamic GPUs in the device model, want %d", len(nd.DynamicGPUs()), len(gpus))
			}
		})
	}
}
