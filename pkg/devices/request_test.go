package devices_test

import (
	"reflect"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name string
		in   resources.Vector
		// want: the parsed request; wantErr: an error is expected
		want    devices.Request
		wantErr bool
	}{
		{"no GPU", resources.Vector{"cpu": 1000}, devices.Request{}, false},
		{"whole GPUs", resources.Vector{"nvidia.com/gpu": 2, "cpu": 4000}, devices.Request{Units: 2}, false},
		{"shared", resources.Vector{"nvidia.com/gpu.shared": 1}, devices.Request{Shared: 1}, false},
		{"MIG sorted", resources.Vector{"nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-1g.10gb": 2},
			devices.Request{MIG: []devices.MIGCount{{Profile: "1g.10gb", Count: 2}, {Profile: "3g.40gb", Count: 1}}}, false},
		{"time-sliced MIG renamed, after the plain name", resources.Vector{"nvidia.com/mig-1g.5gb.shared": 2, "nvidia.com/mig-1g.5gb": 1},
			devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 1}, {Profile: "1g.5gb", Count: 2, Shared: true}}}, false},
		{"renamed +me profile", resources.Vector{"nvidia.com/mig-1g.10gb.me.shared": 1},
			devices.Request{MIG: []devices.MIGCount{{Profile: "1g.10gb+me", Count: 1, Shared: true}}}, false},
		{"fraction", resources.Vector{"gantry.dev/gpu-milli": 460, "gantry.dev/gpu-memory": 2048}, devices.Request{Milli: 460, Memory: 2048}, false},
		{"milli of whole GPUs", resources.Vector{"gantry.dev/gpu-milli": 2000}, devices.Request{Units: 2}, false},
		{"milli above one GPU, not whole", resources.Vector{"gantry.dev/gpu-milli": 1500}, devices.Request{}, true},
		{"whole milli with memory", resources.Vector{"gantry.dev/gpu-milli": 1000, "gantry.dev/gpu-memory": 10}, devices.Request{}, true},
		{"mixed kinds", resources.Vector{"nvidia.com/gpu": 1, "gantry.dev/gpu-milli": 500}, devices.Request{}, true},
		{"mixed MIG and whole", resources.Vector{"nvidia.com/gpu": 1, "nvidia.com/mig-1g.5gb": 1}, devices.Request{}, true},
		{"negative", resources.Vector{"nvidia.com/gpu": -1}, devices.Request{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := devices.ParseRequest(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAccountingMilli(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		sharing devices.Sharing
		in      resources.Vector
		// want: the request's size in gantry.dev/gpu-milli
		want resources.MilliGPU
	}{
		{"whole GPUs", "H100", devices.Sharing{}, resources.Vector{"nvidia.com/gpu": 2}, 2000},
		{"MIG mixed 3g", "H100", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}, resources.Vector{"nvidia.com/mig-3g.40gb": 1}, 428},
		{"MIG mixed 2x1g", "A100", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}, resources.Vector{"nvidia.com/mig-1g.5gb": 2}, 284},
		{"MIG single unit", "A100", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-2g.10gb"}, resources.Vector{"nvidia.com/gpu": 1}, 285},
		{"A30 2g", "A30", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}, resources.Vector{"nvidia.com/mig-2g.12gb": 1}, 500},
		{"time-slice replica", "T4", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}, resources.Vector{"nvidia.com/gpu": 1}, 250},
		{"shared replica", "T4", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3, RenameByDefault: true}, resources.Vector{"nvidia.com/gpu.shared": 2}, 666},
		{"fraction", "V100", devices.Sharing{Mode: devices.Fractional}, resources.Vector{"gantry.dev/gpu-milli": 460}, 460},
		{"memory fraction rounds up", "V100", devices.Sharing{Mode: devices.Fractional}, resources.Vector{"gantry.dev/gpu-memory": 1000}, 62},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustModel(t, tc.model)
			r, err := devices.ParseRequest(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := devices.AccountingMilli(r, m, tc.sharing); got != tc.want {
				t.Fatalf("AccountingMilli = %d, want %d", got, tc.want)
			}
			v, err := devices.AccountingVector(tc.in, m, tc.sharing)
			if err != nil || resources.MilliGPU(v[resources.GPUMilli]) != tc.want {
				t.Fatalf("AccountingVector = %v, %v", v, err)
			}
			for name, a := range tc.in {
				if name != resources.GPUMilli && v[name] != a {
					t.Fatalf("AccountingVector changed %s", name)
				}
			}
		})
	}
}

// The accounting of a request agrees with the milli of the devices Fit picks for it.
func TestAccountingMatchesAssignment(t *testing.T) {
	for _, b := range propNodeShapes {
		n := b().Obj()
		g := n.GPUs()[0]
		m := mustModel(t, string(g.Model))
		if partialUnderOneName(g.Sharing) {
			// Whole and replicated devices share the name; the assignment carries which
			// one was picked (TestAccountingPerResource covers the valuation).
			continue
		}
		for _, v := range []resources.Vector{
			{"nvidia.com/gpu": 1}, {"nvidia.com/gpu.shared": 2}, {"nvidia.com/mig-2g.10gb": 1}, {"gantry.dev/gpu-milli": 300},
		} {
			r, _ := devices.ParseRequest(v)
			a, ref := n.Fit(r)
			if ref != nil {
				continue
			}
			if want := devices.AccountingMilli(r, m, g.Sharing); a.MilliGPU() != want {
				t.Errorf("%s on %s/%s: assignment %dm, accounting %dm", v, g.Model, g.Sharing.EffectiveMode(), a.MilliGPU(), want)
			}
		}
	}
}

func TestCommitRejectsBadAssignments(t *testing.T) {
	n := gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced").Obj()
	a, _ := n.Fit(req(t, "nvidia.com/mig-3g.20gb", 2))
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
	before := devices.DumpState(n)
	bad := []devices.Assignment{
		a, // already held
		{Devices: []devices.Device{{GPU: 9, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb", 0}}}},               // no such GPU
		{Devices: []devices.Device{{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"7g.40gb", 0}}}},              // no such instance
		{Devices: []devices.Device{{GPU: 0, Kind: devices.WholeGPU}}},                                                         // MIG GPU is not whole
		{Devices: []devices.Device{{GPU: 0, Kind: devices.ReplicaDevice}}},                                                    // not a replica GPU
		{Devices: []devices.Device{{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb", 2}}, a.Devices[0]}}, // second device fails: all or nothing
	}
	for i, b := range bad {
		if err := n.Commit(b); err == nil {
			t.Errorf("case %d: commit of %v accepted", i, b)
		}
		if devices.DumpState(n) != before {
			t.Fatalf("case %d: failed commit changed the node", i)
		}
	}
	if err := n.Release(devices.Assignment{Devices: []devices.Device{{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb", 2}}}}); err == nil {
		t.Error("release of a free instance accepted")
	}
	if err := n.SetHealthy(0, false); err != nil {
		t.Fatal(err)
	}
	if err := n.Commit(devices.Assignment{Devices: []devices.Device{{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb", 2}}}}); err == nil {
		t.Error("commit on an unhealthy GPU accepted")
	}
	if err := n.Release(a); err != nil {
		t.Errorf("release on an unhealthy GPU must still work: %v", err)
	}
	if err := n.SetHealthy(7, true); err == nil {
		t.Error("SetHealthy of a missing GPU accepted")
	}
}

// Both spellings of a +me resource read into NVIDIA's profile name, and the request's
// vector uses the Kubernetes spelling the device plugin advertises.
func TestParseRequestMediaExtensionSpellings(t *testing.T) {
	for _, name := range []resources.Name{"nvidia.com/mig-1g.5gb.me", "nvidia.com/mig-1g.5gb+me"} {
		r, err := devices.ParseRequest(resources.Vector{name: 2})
		if err != nil || len(r.MIG) != 1 || r.MIG[0] != (devices.MIGCount{Profile: "1g.5gb+me", Count: 2}) {
			t.Fatalf("ParseRequest(%s) = %+v, %v", name, r, err)
		}
		if got := r.Vector()["nvidia.com/mig-1g.5gb.me"]; got != 2 {
			t.Fatalf("Vector() = %s", r.Vector())
		}
	}
}

// partialUnderOneName reports whether s replicates a subset of some resource's devices
// and advertises them under the resource's own name.
func partialUnderOneName(s devices.Sharing) bool {
	for _, r := range s.Resources {
		if (r.DeviceCount > 0 || len(r.Devices) > 0) && s.AdvertisedName(r) == r.Name {
			return true
		}
	}
	return false
}
