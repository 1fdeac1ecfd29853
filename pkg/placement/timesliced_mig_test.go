package placement_test

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A pod asking for one nvidia.com/mig-1g.5gb on a node that time-slices its one 1g.5gb
// instance 3 ways is charged a third of the instance (rounded down), and exactly three
// such pods fit on the instance: the fourth finds no device.
func TestTimeSlicedMIGPodsShareOneInstance(t *testing.T) {
	const replicas = 3
	sharing := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutCustom, CustomProfiles: [][]string{{"1g.5gb"}}}
	node := gt.MakeNode("n").GPUs("A100-SXM4-40GB", 1).Sharing(sharing).Replicate(gt.Replicated("nvidia.com/mig-1g.5gb", replicas)).Obj()
	ov := snap(t, nil, node).Overlay()
	model, err := devices.LookupModel("A100-SXM4-40GB")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := model.Profile("1g.5gb")
	want := p.Milli(model.MIG) / replicas
	sharing.Resources = []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-1g.5gb", replicas)}
	if quota := devices.AccountingMilli(devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 1}}}, model, sharing); quota != want {
		t.Errorf("quota charges %dm, want %dm (%dm / %d)", quota, want, p.Milli(model.MIG), replicas)
	}
	var held []string
	for i := range replicas + 1 {
		w := gt.MakeWorkload("ns", fmt.Sprintf("w%d", i)).PodSet("main", 1).Requests(gt.Req("cpu", "1", "nvidia.com/mig-1g.5gb", "1")).Obj()
		pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{Rand: rand.New(rand.NewSource(1))})
		if i == replicas {
			if d == nil {
				t.Fatalf("pod %d placed on %v beyond the instance's %d replicas", i, pl.Pods[0].Devices, replicas)
			}
			break
		}
		if d != nil {
			t.Fatalf("pod %d: %v", i, d)
		}
		a := pl.Pods[0].Devices
		if a.MilliGPU() != want || len(a.Devices) != 1 || a.Devices[0].Kind != devices.MIGReplicaDevice {
			t.Fatalf("pod %d holds %v for %dm, want one replica for %dm", i, a, a.MilliGPU(), want)
		}
		held = append(held, a.IDs()...)
	}
	if fmt.Sprint(held) != "[GPU-0/mig-1g.5gb@0/replica-0 GPU-0/mig-1g.5gb@0/replica-1 GPU-0/mig-1g.5gb@0/replica-2]" {
		t.Errorf("held %v, want the instance's three replicas", held)
	}
	if free := ov.Devices(0).Free(); free[resources.GPUMilli] != 0 || free["nvidia.com/mig-1g.5gb"] != 0 {
		t.Errorf("free after three pods %v, want nothing", free)
	}
}
