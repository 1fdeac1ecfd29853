package controller

import (
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// nodeOf builds a node's devices for the property below.
func nodeOf(t interface{ Fatal(...any) }, model string, count int, s devices.Sharing) *devices.NodeDevices {
	m, err := devices.LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, count, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// TestAssignmentFromIDsRoundTrip: whatever the device layer assigns (whole GPUs, MIG
// instances, time-sliced replicas), the IDs written in the pod annotation read back
// into the very same assignment, so a restarted controller charges exactly what was
// bound, and committing the read-back assignment on a fresh node succeeds.
func TestAssignmentFromIDsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.IntRange(0, 2).Draw(t, "kind")
		var nd *devices.NodeDevices
		var req resources.Vector
		switch kind {
		case 0:
			nd = nodeOf(t, "H100", 8, devices.Sharing{Mode: devices.Exclusive})
			req = resources.Vector{resources.NvidiaGPU: resources.Amount(rapid.IntRange(1, 8).Draw(t, "gpus"))}
		case 1:
			nd = nodeOf(t, "A100-SXM4-80GB", 2, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-1g.10gb"})
			req = resources.Vector{resources.MIGResource("1g.10gb"): resources.Amount(rapid.IntRange(1, 7).Draw(t, "slices"))}
		default:
			replicas := rapid.SampledFrom([]int{2, 3, 4, 7}).Draw(t, "replicas")
			nd = nodeOf(t, "L4", 2, devices.Sharing{Mode: devices.TimeSlicing, Replicas: replicas, RenameByDefault: true})
			req = resources.Vector{resources.NvidiaGPUShared: 1}
		}
		r, err := devices.ParseRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		a, refusal := nd.Fit(r)
		if refusal != nil {
			t.Skip("request does not fit: " + refusal.String())
		}
		got, err := AssignmentFromIDs(nd, a.IDs())
		if err != nil {
			t.Fatalf("AssignmentFromIDs(%v): %v", a.IDs(), err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("round trip of %v:\n got %+v\nwant %+v", a.IDs(), got.Devices, a.Devices)
		}
		if err := nd.Clone().Commit(got); err != nil {
			t.Fatalf("commit read-back assignment: %v", err)
		}
	})
}

// TestAssignmentFromIDsErrors: malformed or foreign IDs are errors naming the ID.
func TestAssignmentFromIDsErrors(t *testing.T) {
	nd := nodeOf(t, "H100", 2, devices.Sharing{Mode: devices.Exclusive})
	for _, id := range []string{"GPU-9", "gpu-0", "GPU-0/mig-9g.99gb@0", "GPU-0/replica-x", "GPU-0/share-abc", "GPU-0/what"} {
		if _, err := AssignmentFromIDs(nd, []string{id}); err == nil {
			t.Errorf("AssignmentFromIDs(%q) succeeded; want an error", id)
		}
	}
	if _, err := AssignmentFromIDs(nil, []string{"GPU-0"}); err == nil {
		t.Errorf("devices on a node without GPUs accepted")
	}
}
