package devices_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// timeSliced is 8 A100-40GB GPUs in mig-parted's all-balanced layout (mixed: 2g.10gb@0,
// 1g.5gb@2, 1g.5gb@3, 3g.20gb@4 each) with the given MIG resources time-sliced.
func timeSliced(rename bool, entries ...devices.ReplicatedResource) *devices.NodeDevices {
	return gt.MakeDevices("A100-SXM4-40GB", 8).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed,
		Layout: "all-balanced", RenameByDefault: rename, Resources: entries}).Obj()
}

// perResource is 8 A100-40GB GPUs under a time-slicing config listing entries.
func perResource(entries ...devices.ReplicatedResource) *devices.NodeDevices {
	return gt.MakeDevices("A100-SXM4-40GB", 8).TimeSlicing(0, false).Replicate(entries...).Obj()
}

// pluginCapacity is the node's Capacity under device-plugin names, rendered.
func pluginCapacity(n *devices.NodeDevices) string {
	v := resources.Vector{}
	for name, a := range n.Capacity() {
		if name != resources.GPUMilli && name != resources.GPUMemory {
			v[name] = a
		}
	}
	return v.String()
}

// allIDs fits every device of resource name on n at once and lists their IDs, sorted.
func allIDs(t *testing.T, n *devices.NodeDevices, name resources.Name) []string {
	t.Helper()
	count := int(n.Capacity()[name])
	a, ref := n.Fit(req(t, string(name), count))
	if ref != nil {
		t.Fatalf("fitting all %d %s: %s", count, name, ref)
	}
	return slices.Sorted(slices.Values(a.IDs()))
}

func TestPerResourceSharingOffers(t *testing.T) {
	tests := []struct {
		name string
		node func() *devices.NodeDevices
		// want is the device-plugin capacity; ids the IDs of resource idsOf.
		want  string
		idsOf resources.Name
		ids   string
	}{
		{"GPUs 1 and 6 x2 renamed, the rest whole",
			func() *devices.NodeDevices {
				return perResource(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, Devices: []string{"1", "6"}})
			},
			"nvidia.com/gpu=6,nvidia.com/gpu.shared=4", resources.NvidiaGPUShared,
			"[GPU-1/replica-0 GPU-1/replica-1 GPU-6/replica-0 GPU-6/replica-1]"},
		{"first three GPUs x4 under nvidia.com/gpu",
			func() *devices.NodeDevices {
				return perResource(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 4, DeviceCount: 3})
			},
			"nvidia.com/gpu=17", resources.NvidiaGPU, ""},
		{"GPUs 0 and 5 x3", func() *devices.NodeDevices {
			return perResource(gt.Replicated(resources.NvidiaGPU, 3, "5", "0"))
		}, "nvidia.com/gpu=12", resources.NvidiaGPU, "[GPU-0/replica-0 GPU-0/replica-1 GPU-0/replica-2 GPU-1 GPU-2 GPU-3 GPU-4 GPU-5/replica-0 GPU-5/replica-1 GPU-5/replica-2 GPU-6 GPU-7]"},
		{"time-sliced MIG 1g.5gb x3", func() *devices.NodeDevices { return timeSliced(false, gt.Replicated("nvidia.com/mig-1g.5gb", 3)) },
			"nvidia.com/mig-1g.5gb=48,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", ""},
		{"time-sliced MIG renamed by default", func() *devices.NodeDevices { return timeSliced(true, gt.Replicated("nvidia.com/mig-1g.5gb", 2)) },
			"nvidia.com/mig-1g.5gb.shared=32,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", ""},
		{"one MIG device by <gpu>:<k>", func() *devices.NodeDevices {
			return timeSliced(false, gt.Replicated("nvidia.com/mig-1g.5gb", 3, "1:2"))
		},
			"nvidia.com/mig-1g.5gb=18,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "nvidia.com/mig-1g.5gb", ""},
		{"first three MIG devices of the resource", func() *devices.NodeDevices {
			return timeSliced(false, devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb", Replicas: 2, DeviceCount: 3})
		}, "nvidia.com/mig-1g.5gb=19,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", ""},
		{"MIG single all-1g.5gb x2", func() *devices.NodeDevices {
			return gt.MakeDevices("A100-SXM4-40GB", 8).MIG(devices.MIGSingle, "all-1g.5gb").Replicate(gt.Replicated(resources.NvidiaGPU, 2)).Obj()
		}, "nvidia.com/gpu=112", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node()
			if got := pluginCapacity(n); got != tc.want {
				t.Errorf("capacity %s, want %s", got, tc.want)
			}
			if tc.ids != "" {
				if got := fmt.Sprint(allIDs(t, n, tc.idsOf)); got != tc.ids {
					t.Errorf("%s devices %s, want %s", tc.idsOf, got, tc.ids)
				}
			}
		})
	}
}

func TestPerResourceSubsetIDs(t *testing.T) {
	n := timeSliced(false, gt.Replicated("nvidia.com/mig-1g.5gb", 3, "1:2"))
	ids := allIDs(t, n, "nvidia.com/mig-1g.5gb")
	var replicas []string
	for _, id := range ids {
		if strings.Contains(id, "/replica-") {
			replicas = append(replicas, id)
		}
	}
	// GPU 1's third MIG device (k = 2) is its second 1g.5gb, at slot 3.
	if want := "[GPU-1/mig-1g.5gb@3/replica-0 GPU-1/mig-1g.5gb@3/replica-1 GPU-1/mig-1g.5gb@3/replica-2]"; fmt.Sprint(replicas) != want {
		t.Errorf("replicas %v, want %s", replicas, want)
	}
	if !slices.Contains(ids, "GPU-1/mig-1g.5gb@2") || slices.Contains(ids, "GPU-1/mig-1g.5gb@3") {
		t.Errorf("devices %v: want GPU-1's 1g.5gb@2 whole and @3 as replicas only", ids)
	}
}

// A replica of a time-sliced MIG instance is charged the instance's share over the
// replicas, rounded down, and the replicas of one instance fill it before the next.
func TestTimeSlicedMIGCharge(t *testing.T) {
	n := timeSliced(false, gt.Replicated("nvidia.com/mig-1g.5gb", 3))
	model := mustModel(t, "A100-SXM4-40GB")
	p, _ := model.Profile("1g.5gb")
	wantMilli, wantMem := p.Milli(model.MIG)/3, p.Memory/3
	var ids []string
	var sum resources.MilliGPU
	for range 4 {
		a, ref := n.Fit(req(t, "nvidia.com/mig-1g.5gb", 1))
		if ref != nil {
			t.Fatal(ref)
		}
		d := a.Devices[0]
		if d.Milli != wantMilli || d.Memory != wantMem || d.Kind != devices.MIGReplicaDevice {
			t.Fatalf("device %s: %dm %d MiB kind %d, want %dm %d MiB (a third of 1g.5gb's %dm)", d.ID(), d.Milli, d.Memory, d.Kind, wantMilli, wantMem, p.Milli(model.MIG))
		}
		if err := n.Commit(a); err != nil {
			t.Fatal(err)
		}
		ids, sum = append(ids, d.ID()), sum+d.Milli
	}
	want := "[GPU-0/mig-1g.5gb@2/replica-0 GPU-0/mig-1g.5gb@2/replica-1 GPU-0/mig-1g.5gb@2/replica-2 GPU-0/mig-1g.5gb@3/replica-0]"
	if fmt.Sprint(ids) != want {
		t.Errorf("picked %v, want %s", ids, want)
	}
	if sum > 2*p.Milli(model.MIG) {
		t.Errorf("four replicas of two instances charged %dm, more than the instances' %dm", sum, 2*p.Milli(model.MIG))
	}
	s := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced", Resources: []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-1g.5gb", 3)}}
	if got := devices.AccountingMilli(req(t, "nvidia.com/mig-1g.5gb", 2), model, s); got != 2*wantMilli {
		t.Errorf("AccountingMilli of 2 replicas %dm, want %dm", got, 2*wantMilli)
	}
}

func TestMIGReplicaIDs(t *testing.T) {
	n := timeSliced(false, gt.Replicated("nvidia.com/mig-1g.5gb", 3))
	tests := []struct {
		id string
		// wantErr is a fragment of ParseDeviceID's error; empty means the ID reads back.
		wantErr string
	}{
		{"GPU-2/mig-1g.5gb@3/replica-2", ""},
		{"GPU-2/mig-1g.5gb@3/replica-3", "replica 3 out of range 0..2"},
		{"GPU-2/mig-2g.10gb@0/replica-0", "MIG instance is not time-sliced"},
		{"GPU-2/mig-1g.5gb@5/replica-0", "GPU has no MIG instance 1g.5gb@5"},
		{"GPU-2/mig-1g.5gb@3/replica-01", "want GPU-<i>"},
		{"GPU-2/mig-1g.5gb@3/replicas-1", "want GPU-<i>"},
		{"GPU-2/mig-1g.5gb@3/", "want GPU-<i>"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			d, err := devices.ParseDeviceID(tc.id, n)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr == "" && (d.ID() != tc.id || d.Milli != 47):
				t.Errorf("read back as %s with %dm, want %s with 47m", d.ID(), d.Milli, tc.id)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	whole := devices.Assignment{Devices: []devices.Device{{GPU: 0, Kind: devices.MIGDevice, Instance: devices.Instance{Profile: "1g.5gb", Start: 2}}}}
	if err := n.Commit(whole); err == nil || !strings.Contains(err.Error(), "time-sliced: hold one of its replicas") {
		t.Errorf("committing a time-sliced instance whole: %v, want a refusal", err)
	}
}

func TestMIGReplicaRequests(t *testing.T) {
	strict := func(rename bool) *devices.NodeDevices {
		return gt.MakeDevices("A100-SXM4-40GB", 2).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced",
			FailRequestsGreaterThanOne: true, RenameByDefault: rename, Resources: []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-1g.5gb", 2)}}).Obj()
	}
	tests := []struct {
		name string
		node *devices.NodeDevices
		r    devices.Request
		// want is the picked IDs, or a fragment of the refusal.
		want string
	}{
		{"one replica", strict(false), devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 1}}}, "[GPU-0/mig-1g.5gb@2/replica-0]"},
		{"two in one container refused in NVIDIA's words", strict(false), devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 2}}},
			"nvidia.com/mig-1g.5gb: nvidia.com/mig-1g.5gb is shared (time-slicing): maximum request size for shared resources is 1; found 2"},
		{"two containers of one", strict(false), devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 2}}, PerContainer: 1},
			"[GPU-0/mig-1g.5gb@2/replica-0 GPU-0/mig-1g.5gb@2/replica-1]"},
		{"unreplicated profile keeps two per container", strict(false), devices.Request{MIG: []devices.MIGCount{{Profile: "2g.10gb", Count: 2}}},
			"[GPU-0/mig-2g.10gb@0 GPU-1/mig-2g.10gb@0]"},
		{"renamed: the .shared name", strict(true), req(t, "nvidia.com/mig-1g.5gb.shared", 1), "[GPU-0/mig-1g.5gb@2/replica-0]"},
		{"renamed: the plain name has no devices", strict(true), req(t, "nvidia.com/mig-1g.5gb", 1), "nvidia.com/mig-1g.5gb: need 1, 0 free (0 on the node)"},
		{"not renamed: no .shared devices", strict(false), req(t, "nvidia.com/mig-1g.5gb.shared", 1), "nvidia.com/mig-1g.5gb.shared: need 1, 0 free"},
		{"MIG single replicas under nvidia.com/gpu.shared",
			gt.MakeDevices("A100-SXM4-40GB", 1).MIG(devices.MIGSingle, "all-3g.20gb").Replicate(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2}).Obj(),
			req(t, "nvidia.com/gpu.shared", 3), "[GPU-0/mig-3g.20gb@0/replica-0 GPU-0/mig-3g.20gb@0/replica-1 GPU-0/mig-3g.20gb@4/replica-0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ref := tc.node.Fit(tc.r)
			got := a.String()
			if ref != nil {
				got = ref.String()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if ref == nil && len(tc.r.MIG) > 0 && tc.r.MIG[0].Count == 1 {
				cands := tc.node.FitCandidates(tc.r)
				if len(cands) != 2 || cands[0].String() != got {
					t.Errorf("candidates %v, want one per GPU starting with %s", cands, got)
				}
			}
		})
	}
}

func TestValidateTimeSlicedMIG(t *testing.T) {
	a100 := mustModel(t, "A100-SXM4-40GB")
	mig := func(strategy devices.MIGStrategy, layout string, rs ...devices.ReplicatedResource) devices.Sharing {
		return devices.Sharing{Mode: devices.MIG, MIGStrategy: strategy, Layout: layout, Resources: rs}
	}
	tests := []struct {
		name string
		s    devices.Sharing
		// wantErr is a fragment of the error; empty means valid.
		wantErr string
	}{
		{"mixed 1g.5gb", mig(devices.MIGMixed, "all-balanced", gt.Replicated("nvidia.com/mig-1g.5gb", 4)), ""},
		{"single nvidia.com/gpu", mig(devices.MIGSingle, "all-1g.5gb", gt.Replicated(resources.NvidiaGPU, 4)), ""},
		{"whole GPUs under mixed", mig(devices.MIGMixed, "all-balanced", gt.Replicated(resources.NvidiaGPU, 2)),
			"sharing.resources[0].name: nvidia.com/gpu in mode mig with strategy mixed"},
		{"MIG name under single", mig(devices.MIGSingle, "all-1g.5gb", gt.Replicated("nvidia.com/mig-1g.5gb", 2)),
			"MIG devices are advertised as nvidia.com/gpu"},
		{"unknown profile", mig(devices.MIGMixed, "all-balanced", gt.Replicated("nvidia.com/mig-5g.50gb", 2)), `has no MIG profile "5g.50gb"`},
		{"listed twice", mig(devices.MIGMixed, "all-balanced", gt.Replicated("nvidia.com/mig-1g.5gb", 2), gt.Replicated("nvidia.com/mig-1g.5gb", 3)),
			"sharing.resources[1].name: nvidia.com/mig-1g.5gb is listed twice"},
		{"node-wide replicas too", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.5gb", Replicas: 2, Resources: []devices.ReplicatedResource{gt.Replicated(resources.NvidiaGPU, 2)}},
			"sharing.replicas: 2 set in mode mig"},
		{"zero replicas", mig(devices.MIGMixed, "all-balanced", gt.Replicated("nvidia.com/mig-1g.5gb", 0)), "sharing.resources[0].replicas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := devices.ValidateSharing(a100, tc.s)
			wantErr(t, err, tc.wantErr)
		})
	}
}

func TestAccountingPerResource(t *testing.T) {
	a100 := mustModel(t, "A100-SXM4-40GB")
	tests := []struct {
		name string
		r    devices.Request
		s    devices.Sharing
		want resources.MilliGPU
	}{
		{"per-resource x4 under nvidia.com/gpu", devices.Request{Units: 1},
			devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{gt.Replicated(resources.NvidiaGPU, 4, "0")}}, 250},
		{"per-resource renamed: nvidia.com/gpu is whole", devices.Request{Units: 1},
			devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 4}}}, 1000},
		{"per-resource renamed: .shared is a replica", devices.Request{Shared: 2},
			devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 4}}}, 500},
		{"time-sliced MIG renamed replica", devices.Request{MIG: []devices.MIGCount{{Profile: "3g.20gb", Count: 1, Shared: true}}},
			devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-3g.20gb", RenameByDefault: true, Resources: []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-3g.20gb", 2)}}, 214},
		{"unreplicated profile beside a time-sliced one", devices.Request{MIG: []devices.MIGCount{{Profile: "3g.20gb", Count: 1}}},
			devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced", Resources: []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-1g.5gb", 2)}}, 428},
		{"MIG single replicas", devices.Request{Units: 3},
			devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-1g.5gb", Resources: []devices.ReplicatedResource{gt.Replicated(resources.NvidiaGPU, 2)}}, 3 * 71},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := devices.AccountingMilli(tc.r, a100, tc.s); got != tc.want {
				t.Errorf("AccountingMilli = %d, want %d", got, tc.want)
			}
		})
	}
}
