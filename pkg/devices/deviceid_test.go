package devices

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// meLayout is one A100 GPU with a media-extension instance among others.
var meLayout = []string{"1g.5gb+me", "1g.5gb", "2g.10gb", "3g.20gb"}

// idNodes are one node per sharing mode, for reading IDs back.
func idNodes(t *testing.T) map[string]*NodeDevices {
	return map[string]*NodeDevices{
		"exclusive": makeNode("H100", 2).Obj(t),
		"mig":       makeNode("A100", 1).MIG(MIGMixed, LayoutCustom, meLayout).Obj(t),
		"slicing":   makeNode("T4", 2).TimeSlicing(4, true).Obj(t),
		"mps":       makeNode("A100", 1).MPS(3, 4096).Obj(t),
		"fraction":  makeNode("V100", 2).Fractional().Obj(t),
	}
}

// TestParseDeviceID reads every ID form back into its device, valued from the GPU.
func TestParseDeviceID(t *testing.T) {
	nodes := idNodes(t)
	cases := []struct {
		node, id string
		want     Device
	}{
		{"exclusive", "GPU-1", Device{GPU: 1, Kind: WholeGPU, Milli: 1000, Memory: 81920}},
		{"mig", "GPU-0/mig-1g.5gb+me@3", Device{GPU: 0, Kind: MIGDevice, Instance: Instance{"1g.5gb+me", 3}, Milli: 142, Memory: 5120}},
		{"mig", "GPU-0/mig-3g.20gb@4", Device{GPU: 0, Kind: MIGDevice, Instance: Instance{"3g.20gb", 4}, Milli: 428, Memory: 20480}},
		// The catalog matches profile names without case; the device gets its spelling.
		{"mig", "GPU-0/mig-1G.5GB@2", Device{GPU: 0, Kind: MIGDevice, Instance: Instance{"1g.5gb", 2}, Milli: 142, Memory: 5120}},
		{"slicing", "GPU-1/replica-3", Device{GPU: 1, Kind: ReplicaDevice, Replica: 3, Milli: 250, Memory: 4096}},
		{"mps", "GPU-0/replica-2", Device{GPU: 0, Kind: ReplicaDevice, Replica: 2, Milli: 333, Memory: 4096}},
		{"fraction", "GPU-1/share-250m", Device{GPU: 1, Kind: ShareDevice, Milli: 250}},
		{"fraction", "GPU-0/share-125m-2048Mi", Device{GPU: 0, Kind: ShareDevice, Milli: 125, Memory: 2048}},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			got, err := ParseDeviceID(tc.id, nodes[tc.node])
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
		_, err := ParseDeviceID(tc.id, nodes[tc.node])
		if err == nil {
			t.Errorf("ParseDeviceID(%q) on %s succeeded; want an error", tc.id, tc.node)
			continue
		}
		if !strings.Contains(err.Error(), `"`+tc.id+`"`) {
			t.Errorf("ParseDeviceID(%q): error %q does not name the ID", tc.id, err)
		}
	}
	if _, err := ParseDeviceID("GPU-0", nil); err == nil {
		t.Errorf("a device on a node without GPUs was accepted")
	}
}

// TestIDFormWithoutNode: the GPU index and kind of an ID need no node.
func TestIDFormWithoutNode(t *testing.T) {
	cases := []struct {
		id   string
		gpu  int
		kind DeviceKind
	}{
		{"GPU-12", 12, WholeGPU},
		{"GPU-3/mig-1g.10gb+me@6", 3, MIGDevice},
		{"GPU-2/replica-1", 2, ReplicaDevice},
		{"GPU-1/share-500m-2048Mi", 1, ShareDevice},
	}
	for _, tc := range cases {
		gpu, err := GPUOfID(tc.id)
		if err != nil || gpu != tc.gpu {
			t.Errorf("GPUOfID(%q) = %d, %v; want %d", tc.id, gpu, err, tc.gpu)
		}
		kind, err := KindOfID(tc.id)
		if err != nil || kind != tc.kind {
			t.Errorf("KindOfID(%q) = %d, %v; want %d", tc.id, kind, err, tc.kind)
		}
	}
	if id := GPUID(12); id != "GPU-12" {
		t.Errorf("GPUID(12) = %q, want GPU-12", id)
	}
	for _, bad := range []string{"gpu3", "GPU-3/what", "MIG-3"} {
		if _, err := GPUOfID(bad); err == nil {
			t.Errorf("GPUOfID(%q) succeeded; want an error", bad)
		}
		if _, err := KindOfID(bad); err == nil {
			t.Errorf("KindOfID(%q) succeeded; want an error", bad)
		}
	}
}

// TestAssignmentFromIDs reads a list in order; none is the zero assignment, and one bad
// ID fails the whole list.
func TestAssignmentFromIDs(t *testing.T) {
	n := makeNode("H100", 2).Obj(t)
	a, err := AssignmentFromIDs(n, []string{"GPU-1", "GPU-0"})
	if err != nil || len(a.Devices) != 2 || a.Devices[0].GPU != 1 || a.Devices[1].GPU != 0 {
		t.Fatalf("AssignmentFromIDs = %+v, %v; want GPU-1 then GPU-0", a, err)
	}
	if a, err := AssignmentFromIDs(nil, nil); err != nil || !a.IsZero() {
		t.Fatalf("no IDs = %+v, %v; want the zero assignment", a, err)
	}
	if a, err := AssignmentFromIDs(n, []string{"GPU-0", "GPU-7"}); err == nil || !a.IsZero() {
		t.Fatalf("a foreign ID gave %+v, %v; want an error and nothing", a, err)
	}
}

// Property: whatever the device layer assigns on any sharing mode (whole GPUs, MIG
// instances with +me, time-sliced and MPS replicas, shares), the IDs read back into the
// very same assignment, and that assignment commits on a fresh copy of the node.
func TestPropAssignmentIDsRoundTrip(t *testing.T) {
	shapes := append(propNodeShapes[:len(propNodeShapes):len(propNodeShapes)],
		func() *nodeBuilder { return makeNode("A100", 2).MIG(MIGMixed, LayoutCustom, meLayout) },
		func() *nodeBuilder { return makeNode("A100", 2).MPS(4, 4096) },
	)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom(shapes).Draw(t, "shape")().Obj(t)
		r := drawRequest(t)
		if rapid.Bool().Draw(t, "media") {
			r = Request{MIG: []MIGCount{{Profile: "1g.5gb+me", Count: 1}}}
		}
		a, refusal := n.Fit(r)
		if refusal != nil || a.IsZero() {
			t.Skip("nothing assigned")
		}
		got, err := AssignmentFromIDs(n, a.IDs())
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

// Property: an ID says its GPU, kind, instance, replica and share exactly, for any
// numbers, and formats back to itself.
func TestPropIDFormRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := Device{GPU: rapid.IntRange(0, 1<<20).Draw(t, "gpu"), Kind: DeviceKind(rapid.IntRange(1, 4).Draw(t, "kind"))}
		switch d.Kind {
		case MIGDevice:
			d.Instance = Instance{rapid.SampledFrom([]string{"1g.5gb", "1g.10gb+me", "7g.141gb"}).Draw(t, "profile"), rapid.IntRange(0, 7).Draw(t, "start")}
		case ReplicaDevice:
			d.Replica = rapid.IntRange(0, 64).Draw(t, "replica")
		case ShareDevice:
			d.Milli = resources.MilliGPU(rapid.IntRange(0, 1000).Draw(t, "milli"))
			d.Memory = resources.MiB(rapid.IntRange(0, 1<<20).Draw(t, "memory"))
		}
		got, err := parseIDForm(d.ID())
		if err != nil {
			t.Fatalf("parseIDForm(%q): %v", d.ID(), err)
		}
		if got != d || got.ID() != d.ID() {
			t.Fatalf("parseIDForm(%q) = %+v, want %+v", d.ID(), got, d)
		}
	})
}
