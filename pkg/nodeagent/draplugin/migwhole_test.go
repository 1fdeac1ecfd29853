package draplugin_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// migOn reads GPU gpu's MIG mode from the mock: on, and whether a change is pending.
func (n *dynamicNode) migOn(t *testing.T, gpu int) (on, pending bool) {
	t.Helper()
	h, r := n.mock.Server().DeviceGetHandleByIndex(gpu)
	if r != nvml.SUCCESS {
		t.Fatal(r)
	}
	current, next, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		t.Fatal(r)
	}
	return current == nvml.DEVICE_MIG_ENABLE, current != next
}

// carveAndRelease leaves GPU gpu with MIG mode on and nothing carved, as after a claim
// on one of its placements was unprepared.
func (n *dynamicNode) carveAndRelease(t *testing.T, gpu int) {
	t.Helper()
	p := startPlugin(t, n.cfg, n.node)
	c := claim("uid-carve", "carve", "mig:"+n.name(t, devices.Device{GPU: gpu, Kind: devices.MIGDevice, Instance: devices.Instance{Profile: "1g.5gb", Start: 0}}.ID()))
	if res := p.prepare(t, c); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := p.unprepare(t, "uid-carve"); err != nil {
		t.Fatal(err)
	}
	if on, _ := n.migOn(t, gpu); !on || len(n.carved(t, gpu)) != 0 {
		t.Fatalf("GPU %d: MIG on %t, carved %v; want on with nothing carved", gpu, on, n.carved(t, gpu))
	}
}

// TestPrepareWholeDynamicGPUTurnsMIGOff: a dynamic GPU given whole has MIG mode turned
// off before its CDI spec is written, so the container sees one GPU; repeating the
// prepare, also after a restart, changes nothing; MIG mode stays off after unprepare,
// and the next claim on one of its placements turns it back on.
func TestPrepareWholeDynamicGPUTurnsMIGOff(t *testing.T) {
	n := newDynamicNode(t, true)
	n.carveAndRelease(t, 4)
	p := startPlugin(t, n.cfg, n.node)
	whole := claim("uid-w", "whole", "gpu:"+n.name(t, "GPU-4"))
	if res := p.prepare(t, whole); res.Err != nil {
		t.Fatalf("prepare: %v", res.Err)
	}
	if on, pending := n.migOn(t, 4); on || pending {
		t.Errorf("GPU 4 MIG on %t (pending change %t) after giving it whole, want off", on, pending)
	}
	if v := visible(t, p, "uid-w", "gpu"); !reflect.DeepEqual(v, []string{n.node.GPUs[4].UUID}) {
		t.Errorf("claim sees %v, want GPU 4's UUID %s", v, n.node.GPUs[4].UUID)
	}
	for _, q := range []*plugin{p, startPlugin(t, n.cfg, n.node)} { // the same agent, then a restarted one
		if res := q.prepare(t, whole); res.Err != nil {
			t.Errorf("repeated prepare: %v", res.Err)
		}
		if on, _ := n.migOn(t, 4); on {
			t.Error("a repeated prepare turned MIG on")
		}
	}
	if err := p.unprepare(t, "uid-w"); err != nil {
		t.Fatal(err)
	}
	if on, _ := n.migOn(t, 4); on {
		t.Error("unprepare turned MIG mode on; the next carving does that")
	}
	after := startPlugin(t, n.cfg, n.node)
	if res := after.prepare(t, claim("uid-m", "mig", "mig:"+n.name(t, "GPU-4/mig-3g.20gb@4"))); res.Err != nil {
		t.Fatalf("carving after the whole claim: %v", res.Err)
	}
	if on, pending := n.migOn(t, 4); !on || pending {
		t.Errorf("GPU 4 MIG on %t (pending %t) after carving, want on", on, pending)
	}
	if got := n.carved(t, 4); len(got) != 1 || got[devices.Instance{Profile: "3g.20gb", Start: 4}] == "" {
		t.Errorf("GPU 4 holds %v, want the 3g.20gb@4", got)
	}
}

// TestPrepareWholeDynamicGPUFails: a dynamic GPU that cannot be given whole fails its
// claim alone, with the reason, no CDI spec and the claim's carvings undone; a claim
// prepared in the same call goes on.
func TestPrepareWholeDynamicGPUFails(t *testing.T) {
	tests := []struct {
		name   string
		carve  bool
		setup  func(t *testing.T, n *dynamicNode)
		claim  []string // device IDs as gpu:<id> (whole) or mig:<id>
		reason string
		// migOn is GPU 5's MIG mode afterwards; carved GPU 1's instances afterwards.
		migOn  bool
		carved int
	}{
		{"no carver", false, nil, []string{"gpu:GPU-5"}, "changes no MIG mode", false, 0},
		{"an instance carved outside the plugin", true, func(t *testing.T, n *dynamicNode) {
			m, err := devices.LookupModel(string(n.node.GPUs[5].Model))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nodeagent.CreateMIGDevice(n.mock.Server(), m, 5, devices.Instance{Profile: "2g.10gb", Start: 2}); err != nil {
				t.Fatal(err)
			}
		}, []string{"gpu:GPU-5"}, "GPU 5: turning MIG mode off to give the GPU whole: MIG instances [2g.10gb@2] are carved on it", true, 0},
		{"a reset needed, and the claim's carving undone", true, func(t *testing.T, n *dynamicNode) {
			n.carveAndRelease(t, 5)
			n.mock.Server().RequireReset(5)
		}, []string{"mig:GPU-1/mig-3g.20gb@0", "gpu:GPU-5"}, "MIG mode off is pending", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newDynamicNode(t, tc.carve)
			if tc.setup != nil {
				tc.setup(t, n)
			}
			p := startPlugin(t, n.cfg, n.node)
			var results []string
			for _, rd := range tc.claim {
				req, id, _ := strings.Cut(rd, ":")
				results = append(results, req+":"+n.name(t, id))
			}
			bad := claim("uid-x", "x", results...)
			good := claim("uid-ok", "ok", "gpu:"+n.name(t, "GPU-6"))
			res, err := p.PrepareResourceClaims(context.Background(), []*resourcev1.ResourceClaim{bad, good})
			if err != nil {
				t.Fatal(err)
			}
			if e := res["uid-x"].Err; e == nil || !strings.Contains(e.Error(), tc.reason) || !strings.Contains(e.Error(), "claim team-a/x") {
				t.Errorf("prepare: %v, want an error naming the claim with %q", e, tc.reason)
			}
			if _, ok := p.spec(t, "uid-x"); ok {
				t.Error("a refused claim has a CDI spec")
			}
			if on, _ := n.migOn(t, 5); on != tc.migOn {
				t.Errorf("GPU 5 MIG on %t, want %t", on, tc.migOn)
			}
			if got := n.carved(t, 1); len(got) != tc.carved {
				t.Errorf("GPU 1 holds %v, want %d instances", got, tc.carved)
			}
			if e := res["uid-ok"].Err; (e == nil) != tc.carve {
				t.Errorf("the other claim: %v (carver %t)", e, tc.carve)
			}
		})
	}
}
