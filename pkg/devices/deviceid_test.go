package devices_test

import (
	"reflect"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"pgregory.net/rapid"
)

// meLayout is one A100 GPU with a media-extension instance among others.
var meLayout = []string{"1g.5gb+me", "1g.5gb", "2g.10gb", "3g.20gb"}

// idNodes are one node per sharing mode, for reading IDs back.
func idNodes(t *testing.T) map[string]*devices.NodeDevices {
	return map[string]*devices.NodeDevices{
		"exclusive": gt.MakeDevices("H100", 2).Obj(),
		"mig":       gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, devices.LayoutCustom, meLayout).Obj(),
		"slicing":   gt.MakeDevices("T4", 2).TimeSlicing(4, true).Obj(),
		"mps":       gt.MakeDevices("A100", 1).MPS(3, 4096).Obj(),
		"fraction":  gt.MakeDevices("V100", 2).Fractional().Obj(),
	}
}

// TestParseDeviceID reads every ID form back into its device, valued from the GPU.
func TestParseDeviceID(t *testing.T) {
	nodes := idNodes(t)
	cases := []struct {
		node, id string
		want     devices.Device
	}{
		{"exclusive", "GPU-1", devices.Device{GPU: 1, Kind: devices.WholeGPU, Milli: 1000, Memory: 81920}},
		{"mig", "GPU-0/mig-1g.5gb+me@3", devices.Device{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb+me", 3}, Milli: 142, Memory: 4864}},
		// The Kubernetes spelling of a +me profile reads into NVIDIA's.
		{"mig", "GPU-0/mig-1g.5gb.me@3", devices.Device{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb+me", 3}, Milli: 142, Memory: 4864}},
		{"mig", "GPU-0/mig-3g.20gb@4", devices.Device{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"3g.20gb", 4}, Milli: 428, Memory: 19968}},
		// The catalog matches profile names without case; the device gets its spelling.
		{"mig", "GPU-0/mig-1G.5GB@2", devices.Device{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{"1g.5gb", 2}, Milli: 142, Memory: 4864}},
		{"slicing", "GPU-1/replica-3", devices.Device{GPU: 1, Kind: devices.ReplicaDevice, Replica: 3, Milli: 250, Memory: 4096}},
		{"mps", "GPU-0/replica-2", devices.Device{GPU: 0, Kind: devices.ReplicaDevice, Replica: 2, Milli: 333, Memory: 4096}},
		{"fraction", "GPU-1/share-250m", devices.Device{GPU: 1, Kind: devices.ShareDevice, Milli: 250}},
		{"fraction", "GPU-0/share-125m-2048Mi", devices.Device{GPU: 0, Kind: devices.ShareDevice, Milli: 125, Memory: 2048}},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			got, err := devices.ParseDeviceID(tc.id, nodes[tc.node])
			if err != nil {
				t.Fatalf("ParseDeviceID(%q): %v", tc.id, err)
			}
			if got != tc.want {
				t.Fatalf("ParseDeviceID(%q) = %+v, want %+v", tc.id, got, tc.want)
			}
		})
	}
}

// TestParseDeviceIDErrors: malformed IDs, and IDs the node cannot hold, are errors
// naming the ID.
func TestParseDeviceIDErrors(t *testing.T) {
	nodes := idNodes(t)
	cases := []struct{ node, id string }{
		{"exclusive", ""},
		{"exclusive", "GPU-"},
		{"exclusive", "gpu-0"},
		{"exclusive", "GPU-9"}, // no such GPU
		{"exclusive", "GPU--1"},
		{"exclusive", "GPU-+1"},
		{"exclusive", "GPU-01"},
		{"exclusive", "GPU-0/"},
		{"exclusive", "GPU-0/what"},
		{"exclusive", "GPU-0/mig-1g.10gb@0/x"},
		{"mig", "GPU-0/mig-@0"},
		{"mig", "GPU-0/mig-1g.5gb"},
		{"mig", "GPU-0/mig-1g.5gb@x"},
		{"mig", "GPU-0/mig-9g.99gb@0"},      // not a profile of the model
		{"exclusive", "GPU-0/mig-1g.5gb@0"}, // an A100-40GB profile on an H100
		{"slicing", "GPU-0/replica-x"},
		{"exclusive", "GPU-0/replica-0"}, // the GPU is not shared
		{"fraction", "GPU-0/share-abc"},
		{"fraction", "GPU-0/share-250"},
		{"fraction", "GPU-0/share-250m-"},
		{"fraction", "GPU-0/share-250m-2048"},
		{"fraction", "GPU-0/share-250m-0Mi"}, // Device.ID never writes no memory
		{"fraction", "GPU-0/share--1m"},
	}
	for _, tc := range cases {
		_, err := devices.ParseDeviceID(tc.id, nodes[tc.node])
		if err == nil {
			t.Errorf("ParseDeviceID(%q) on %s succeeded; want an error", tc.id, tc.node)
			continue
		}
		if !strings.Contains(err.Error(), `"`+tc.id+`"`) {
			t.Errorf("ParseDeviceID(%q): error %q does not name the ID", tc.id, err)
		}
	}
	if _, err := devices.ParseDeviceID("GPU-0", nil); err == nil {
		t.Errorf("a device on a node without GPUs was accepted")
	}
}

// TestIDFormWithoutNode: the GPU index and kind of an ID need no node.
func TestIDFormWithoutNode(t *testing.T) {
	cases := []struct {
		id   string
		gpu  int
		kind devices.DeviceKind
	}{
		{"GPU-12", 12, devices.WholeGPU},
		{"GPU-3/mig-1g.10gb+me@6", 3, devices.MIGDevice},
		{"GPU-2/replica-1", 2, devices.ReplicaDevice},
		{"GPU-1/share-500m-2048Mi", 1, devices.ShareDevice},
	}
	for _, tc := range cases {
		gpu, err := devices.GPUOfID(tc.id)
		if err != nil || gpu != tc.gpu {
			t.Errorf("GPUOfID(%q) = %d, %v; want %d", tc.id, gpu, err, tc.gpu)
		}
		kind, err := devices.KindOfID(tc.id)
		if err != nil || kind != tc.kind {
			t.Errorf("KindOfID(%q) = %d, %v; want %d", tc.id, kind, err, tc.kind)
		}
	}
	if id := devices.GPUID(12); id != "GPU-12" {
		t.Errorf("GPUID(12) = %q, want GPU-12", id)
	}
	for _, bad := range []string{"gpu3", "GPU-3/what", "MIG-3"} {
		if _, err := devices.GPUOfID(bad); err == nil {
			t.Errorf("GPUOfID(%q) succeeded; want an error", bad)
		}
		if _, err := devices.KindOfID(bad); err == nil {
			t.Errorf("KindOfID(%q) succeeded; want an error", bad)
		}
	}
}

// TestAssignmentFromIDs reads a list in order; none is the zero assignment, and one bad
// ID fails the whole list.
func TestAssignmentFromIDs(t *testing.T) {
	n := gt.MakeDevices("H100", 2).Obj()
	a, err := devices.AssignmentFromIDs(n, []string{"GPU-1", "GPU-0"})
	if err != nil || len(a.Devices) != 2 || a.Devices[0].GPU != 1 || a.Devices[1].GPU != 0 {
		t.Fatalf("AssignmentFromIDs = %+v, %v; want GPU-1 then GPU-0", a, err)
	}
	if a, err := devices.AssignmentFromIDs(nil, nil); err != nil || !a.IsZero() {
		t.Fatalf("no IDs = %+v, %v; want the zero assignment", a, err)
	}
	if a, err := devices.AssignmentFromIDs(n, []string{"GPU-0", "GPU-7"}); err == nil || !a.IsZero() {
		t.Fatalf("a foreign ID gave %+v, %v; want an error and nothing", a, err)
	}
}

// Property: whatever the device layer assigns on any sharing mode (whole GPUs, MIG
// instances with +me, time-sliced and MPS replicas, shares), the IDs read back into the
// very same assignment, and that assignment commits on a fresh copy of the node.
func TestPropAssignmentIDsRoundTrip(t *testing.T) {
	shapes := append(propNodeShapes[:len(propNodeShapes):len(propNodeShapes)],
		func() *gt.DevicesWrapper {
			return gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, devices.LayoutCustom, meLayout)
		},
		func() *gt.DevicesWrapper { return gt.MakeDevices("A100", 2).MPS(4, 4096) },
	)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom(shapes).Draw(t, "shape")().Obj()
		r := drawRequest(t)
		if rapid.Bool().Draw(t, "media") {
			r = devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb+me", Count: 1}}}
		}
		a, refusal := n.Fit(r)
		if refusal != nil || a.IsZero() {
			t.Skip("nothing assigned")
		}
		got, err := devices.AssignmentFromIDs(n, a.IDs())
		if err != nil {
			t.Fatalf("AssignmentFromIDs(%v): %v", a.IDs(), err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("round trip of %v:\n got %+v\nwant %+v", a.IDs(), got.Devices, a.Devices)
		}
		if err := n.Clone().Commit(got); err != nil {
			t.Fatalf("commit of the read-back %v: %v", got, err)
		}
	})
}
