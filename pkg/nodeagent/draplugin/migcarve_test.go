package draplugin_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/draplugin"
)

// dynamicNode is a mock DGX A100 whose GPUs have the MIG layout chosen at allocation
// time, and a plugin that carves through the mock's NVML.
type dynamicNode struct {
	mock *mocknode.NodeWrapper
	node draplugin.Node
	inv  *dra.NodeInventory
	cfg  draplugin.Config
}

func newDynamicNode(t *testing.T, carve bool) *dynamicNode {
	t.Helper()
	mock := mocknode.MakeNode(t)
	n := draplugin.NodeFromDiscovery(nodeName, mock.Discover(), nil)
	for i := range n.GPUs {
		n.GPUs[i].Sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
		n.GPUs[i].Instances = nil
	}
	inv, err := dra.NewNodeInventory(nodeName, n.GPUs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := draplugin.Config{PluginDir: filepath.Join(dir, "plugin"), CDIDir: filepath.Join(dir, "cdi")}
	if carve {
		cfg.MIG = draplugin.NVMLCarver(mock.Server(), n.GPUs)
	}
	return &dynamicNode{mock: mock, node: n, inv: inv, cfg: cfg}
}

// name is the DRA name of a Gantry device ID ("GPU-2/mig-3g.20gb@4").
func (n *dynamicNode) name(t *testing.T, id string) string {
	t.Helper()
	name, ok := n.inv.DeviceName(id)
	if !ok {
		t.Fatalf("no DRA device for %s", id)
	}
	return name
}

// carved reads GPU gpu's MIG devices back through NVML: instance -> UUID.
func (n *dynamicNode) carved(t *testing.T, gpu int) map[devices.Instance]string {
	t.Helper()
	d, err := nodeagent.Discover(n.mock.Server(), devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed})
	if err != nil {
		t.Fatal(err)
	}
	out := map[devices.Instance]string{}
	for _, m := range d.GPUs[gpu].MIG {
		out[m.Instance] = m.UUID
	}
	return out
}

// visible is the NVIDIA_VISIBLE_DEVICES of a claim's request in its CDI spec.
func visible(t *testing.T, p *plugin, uid, request string) []string {
	t.Helper()
	spec, ok := p.spec(t, uid)
	if !ok {
		t.Fatalf("claim %s has no CDI spec", uid)
	}
	env := spec[uid+"-"+request]
	if len(env) != 1 || !strings.HasPrefix(env[0], "NVIDIA_VISIBLE_DEVICES=") {
		t.Fatalf("claim %s request %s: env %v", uid, request, env)
	}
	return strings.Split(strings.TrimPrefix(env[0], "NVIDIA_VISIBLE_DEVICES="), ",")
}

// TestPrepareCarvesDynamicMIG: preparing a claim on placements of a dynamic GPU creates
// those MIG devices at their placements and hands their UUIDs to the container;
// repeating the prepare (also after a restart) creates nothing more, and unpreparing
// destroys them.
func TestPrepareCarvesDynamicMIG(t *testing.T) {
	n := newDynamicNode(t, true)
	p := startPlugin(t, n.cfg, n.node)
	a := claim("uid-a", "big", "mig:"+n.name(t, "GPU-2/mig-3g.20gb@4"))
	b := claim("uid-b", "small", "mig:"+n.name(t, "GPU-2/mig-2g.10gb@0"), "mig:"+n.name(t, "GPU-2/mig-2g.10gb@2"))
	for _, c := range []string{"uid-a", "uid-b"} {
		cl := a
		if c == "uid-b" {
			cl = b
		}
		if res := p.prepare(t, cl); res.Err != nil {
			t.Fatalf("prepare %s: %v", c, res.Err)
		}
	}
	got := n.carved(t, 2)
	want := []devices.Instance{{Profile: "2g.10gb", Start: 0}, {Profile: "2g.10gb", Start: 2}, {Profile: "3g.20gb", Start: 4}}
	if len(got) != len(want) {
		t.Fatalf("GPU 2 holds %v, want %v", got, want)
	}
	if v := visible(t, p, "uid-a", "mig"); !reflect.DeepEqual(v, []string{got[want[2]]}) || got[want[2]] == "" {
		t.Errorf("claim a sees %v, want the 3g.20gb@4 device %q", v, got[want[2]])
	}
	if v := visible(t, p, "uid-b", "mig"); !reflect.DeepEqual(v, []string{got[want[0]], got[want[1]]}) {
		t.Errorf("claim b sees %v, want %v", v, []string{got[want[0]], got[want[1]]})
	}

	again := startPlugin(t, n.cfg, n.node) // a restarted agent
	if res := again.prepare(t, a); res.Err != nil || !reflect.DeepEqual(visible(t, again, "uid-a", "mig"), []string{got[want[2]]}) {
		t.Fatalf("prepare after restart: %v, sees %v", res.Err, visible(t, again, "uid-a", "mig"))
	}
	if after := n.carved(t, 2); !reflect.DeepEqual(after, got) {
		t.Errorf("repeated prepare changed GPU 2: %v, was %v", after, got)
	}
	if err := again.unprepare(t, "uid-a"); err != nil {
		t.Fatal(err)
	}
	if err := again.unprepare(t, "uid-a"); err != nil {
		t.Errorf("second unprepare: %v", err)
	}
	after := n.carved(t, 2)
	if _, ok := after[want[2]]; ok || len(after) != 2 {
		t.Errorf("after unprepare GPU 2 holds %v, want the two 2g.10gb only", after)
	}
}

// TestPrepareAdoptsAnInterruptedCarve: a MIG device created by a prepare that never
// recorded the claim (the agent died in between) is adopted, not created twice.
func TestPrepareAdoptsAnInterruptedCarve(t *testing.T) {
	n := newDynamicNode(t, true)
	in := devices.Instance{Profile: "3g.20gb", Start: 0}
	m, err := devices.LookupModel(string(n.node.GPUs[1].Model))
	if err != nil {
		t.Fatal(err)
	}
	uuid, err := nodeagent.CreateMIGDevice(n.mock.Server(), m, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	p := startPlugin(t, n.cfg, n.node)
	if res := p.prepare(t, claim("uid-a", "a", "mig:"+n.name(t, "GPU-1/mig-3g.20gb@0"))); res.Err != nil {
		t.Fatal(res.Err)
	}
	if v := visible(t, p, "uid-a", "mig"); !reflect.DeepEqual(v, []string{uuid}) {
		t.Errorf("sees %v, want the existing device %s", v, uuid)
	}
	if got := n.carved(t, 1); len(got) != 1 || got[in] != uuid {
		t.Errorf("GPU 1 holds %v, want only %s", got, uuid)
	}
}

// TestPrepareDynamicRefuses: claims that cannot get their placements fail alone and
// leave nothing carved.
func TestPrepareDynamicRefuses(t *testing.T) {
	tests := []struct {
		name   string
		carve  bool
		before [][]string // claims prepared first, as device IDs
		claim  []string
		reason string
		gpu    int
		left   []devices.Instance // GPU gpu's devices afterwards
	}{
		{"no carver", false, nil, []string{"GPU-0/mig-1g.5gb@0"}, "carves no MIG devices", 0, nil},
		{"the placement of another claim", true, [][]string{{"GPU-0/mig-1g.5gb@0"}}, []string{"GPU-0/mig-1g.5gb@0"}, "is prepared for claim", 0,
			[]devices.Instance{{Profile: "1g.5gb", Start: 0}}},
		{"the GPU whole beside a MIG device", true, [][]string{{"GPU-0/mig-1g.5gb@0"}}, []string{"GPU-0"}, "GPU 0 holds", 0,
			[]devices.Instance{{Profile: "1g.5gb", Start: 0}}},
		{"a MIG device on a GPU given whole", true, [][]string{{"GPU-0"}}, []string{"GPU-0/mig-1g.5gb@0"}, "GPU 0 holds", 0, nil},
		{"an overlapping placement undoes the claim's carves", true, [][]string{{"GPU-3/mig-3g.20gb@4"}}, []string{"GPU-3/mig-1g.5gb@0", "GPU-3/mig-4g.20gb@0"}, "GPU 3", 3,
			[]devices.Instance{{Profile: "3g.20gb", Start: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newDynamicNode(t, tc.carve)
			p := startPlugin(t, n.cfg, n.node)
			for i, ids := range tc.before {
				if res := p.prepare(t, claim("uid-before-"+string(rune('0'+i)), "before", n.devs(t, ids)...)); res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			res := p.prepare(t, claim("uid-x", "x", n.devs(t, tc.claim)...))
			if res.Err == nil || !strings.Contains(res.Err.Error(), tc.reason) {
				t.Errorf("prepare: %v, want an error with %q", res.Err, tc.reason)
			}
			if _, ok := p.spec(t, "uid-x"); ok {
				t.Error("a refused claim has a CDI spec")
			}
			var left []devices.Instance
			for in := range n.carved(t, tc.gpu) {
				left = append(left, in)
			}
			slices.SortFunc(left, func(a, b devices.Instance) int { return a.Start - b.Start })
			if !slices.Equal(left, tc.left) {
				t.Errorf("GPU %d holds %v, want %v", tc.gpu, left, tc.left)
			}
		})
	}
}

// devs are "mig:<DRA name>" results for device IDs.
func (n *dynamicNode) devs(t *testing.T, ids []string) []string {
	t.Helper()
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "mig:" + n.name(t, id)
	}
	return out
}
