package view

import (
	"slices"
	"testing"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// fit picks devices for one pod's GPU request on nd and commits them, as a bound pod
// holds them.
func fit(t *testing.T, nd *devices.NodeDevices, req resources.Vector) devices.Assignment {
	t.Helper()
	r, err := devices.ParseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	a, refusal := nd.Fit(r)
	if refusal != nil {
		t.Fatalf("%v does not fit: %s", req, refusal)
	}
	if err := nd.Commit(a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestGPUsOfWholeGPUs(t *testing.T) {
	nd := itesting.MakeDevices("H100", 4).Unhealthy(3).Obj()
	a := fit(t, nd, resources.Vector{resources.NvidiaGPU: 2})
	gpus := GPUsOf(nd, []Holding{{Holder: "ns/a", Devices: a}})
	if len(gpus) != 4 {
		t.Fatalf("%d GPUs, want 4", len(gpus))
	}
	var held []int
	for _, g := range gpus {
		if len(g.Devices) != 1 || g.Devices[0].ID != devices.GPUID(g.Index) || g.Mode != string(devices.Exclusive) {
			t.Errorf("GPU %d: %+v, want one whole exclusive device", g.Index, g)
		}
		if g.Devices[0].Holder == "ns/a" {
			held = append(held, g.Index)
			if g.Allocated != resources.MilliPerGPU {
				t.Errorf("GPU %d: allocated %d, want 1000", g.Index, g.Allocated)
			}
		}
		if g.Healthy != (g.Index != 3) {
			t.Errorf("GPU %d: healthy %v", g.Index, g.Healthy)
		}
	}
	if !slices.Equal(held, a.GPUIndices()) {
		t.Errorf("GPUs held by ns/a %v, want %v", held, a.GPUIndices())
	}
}

func TestGPUsOfMIGInstances(t *testing.T) {
	nd := itesting.MakeDevices("A100-SXM4-80GB", 1).MIG(devices.MIGMixed, "all-1g.10gb").Obj()
	a := fit(t, nd, resources.Vector{resources.MIGResource("1g.10gb"): 1})
	g := GPUsOf(nd, []Holding{{Holder: "ns/nb", Devices: a}})[0]
	if len(g.Devices) != len(nd.GPUs()[0].Instances) {
		t.Fatalf("%d devices, want one per instance (%d)", len(g.Devices), len(nd.GPUs()[0].Instances))
	}
	holders := 0
	for _, d := range g.Devices {
		if d.Profile != "1g.10gb" || d.Share != devices.ProfileMilli("1g.10gb") {
			t.Errorf("device %+v: want a 1g.10gb instance at its share", d)
		}
		if d.Holder != "" {
			holders++
			if d.ID != a.IDs()[0] {
				t.Errorf("held device %s, want %s", d.ID, a.IDs()[0])
			}
		}
	}
	if holders != 1 || g.Allocated != a.MilliGPU() {
		t.Errorf("%d held, allocated %d; want 1 held, %d", holders, g.Allocated, a.MilliGPU())
	}
}

func TestGPUsOfReplicasAndShares(t *testing.T) {
	ts := itesting.MakeDevices("H100", 1).TimeSlicing(4, false).Obj()
	a := fit(t, ts, resources.Vector{resources.NvidiaGPU: 1})
	g := GPUsOf(ts, []Holding{{Holder: "ns/r", Devices: a}})[0]
	if len(g.Devices) != 4 || g.Allocated != 250 || g.Mode != string(devices.TimeSlicing) {
		t.Errorf("time-sliced GPU %+v: want 4 replicas, 250 allocated", g)
	}

	fr := itesting.MakeDevices("H100", 1).Fractional().Obj()
	b := fit(t, fr, resources.Vector{resources.GPUMilli: 300})
	g = GPUsOf(fr, []Holding{{Holder: "ns/f", Devices: b}})[0]
	if len(g.Devices) != 1 || g.Devices[0].Holder != "ns/f" || g.Devices[0].Share != 300 || g.Allocated != 300 {
		t.Errorf("fractional GPU %+v: want the one share held by ns/f", g)
	}
}

func TestGPUsOfNodeWithoutGPUs(t *testing.T) {
	if got := GPUsOf(nil, nil); got != nil {
		t.Errorf("GPUsOf(nil) = %v, want nil", got)
	}
}
