package controller

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	resourcev1 "k8s.io/api/resource/v1"
)

// An admitted gang none of whose pods is bound is stale when a slot of a pod set
// naming a shared claim relies on the claim where it no longer is: allocated on
// another node, to be allocated on another node by an admitted pod, or released with
// no admitted pod allocating it. A claim allocated on the slot's node, or that an
// admitted pod's slot there allocates, is not stale; neither is a gang with a pod
// bound, a claim from a template (however long it is missing), a claim not in the
// cache, nor a pod set naming no shared claim wherever it is placed.
func TestStaleClaimDecision(t *testing.T) {
	spec := gpusSpec(1)
	model := &api.Workload{Meta: api.Meta{Namespace: "ns", Name: "g"}, PodSets: []api.PodSet{
		{Name: "main", Count: 1, Claims: []api.PodClaim{
			{Name: "data", ResourceClaimName: "data", Spec: &spec},
			{Name: "gpu", ResourceClaimTemplateName: "one", Spec: &spec},
		}},
		{Name: "own", Count: 1, Claims: []api.PodClaim{{Name: "gpu", ResourceClaimTemplateName: "one", Spec: &spec}}},
	}}
	main := v1alpha1.PodPlacement{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0"}}
	own := v1alpha1.PodPlacement{PodSet: "own", Index: 0, Node: "n2", Devices: []string{"GPU-0"}}
	for _, tc := range []struct {
		name      string
		claims    map[string]sharedClaimState
		bound     bool
		placement []v1alpha1.PodPlacement
		wantIn    []string // the reason names these; nil: not stale
	}{
		{name: "allocated on the slot's node", claims: map[string]sharedClaimState{"ns/data": {allocatedOn: "n1", heldOn: "n1"}}},
		{name: "released, allocated by an admitted pod's slot there", claims: map[string]sharedClaimState{"ns/data": {heldOn: "n1"}}},
		{name: "released, no admitted pod allocates it", claims: map[string]sharedClaimState{"ns/data": {}},
			wantIn: []string{"ResourceClaim ns/data", "slot main-0", "node n1", "no longer allocated"}},
		{name: "allocated on another node", claims: map[string]sharedClaimState{"ns/data": {allocatedOn: "n2", heldOn: "n2"}},
			wantIn: []string{"ResourceClaim ns/data", "allocated on node n2", "slot main-0", "node n1"}},
		{name: "to be allocated on another node", claims: map[string]sharedClaimState{"ns/data": {heldOn: "n2"}},
			wantIn: []string{"ResourceClaim ns/data", "to be allocated on node n2", "node n1"}},
		{name: "released, a pod of the gang bound", claims: map[string]sharedClaimState{"ns/data": {}}, bound: true},
		{name: "not in the cache", claims: map[string]sharedClaimState{}},
		{name: "template claims only, not created", claims: map[string]sharedClaimState{"ns/data": {}, "ns/g-own-0-gpu": {}},
			placement: []v1alpha1.PodPlacement{own}},
		{name: "pod set without shared claims elsewhere", claims: map[string]sharedClaimState{"ns/data": {allocatedOn: "n1", heldOn: "n1"}},
			placement: []v1alpha1.PodPlacement{own, main}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pls := tc.placement
			if pls == nil {
				pls = []v1alpha1.PodPlacement{main, own}
			}
			g := gangClaimPlan{model: model, placements: pls, bound: tc.bound}
			why, stale := g.staleClaim(tc.claims)
			if stale != (tc.wantIn != nil) {
				t.Fatalf("stale %v (%q), want %v", stale, why, tc.wantIn != nil)
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(why, w) {
					t.Errorf("reason %q does not name %q", why, w)
				}
			}
		})
	}
}

// The decision read from a pass's state: the claims' allocations from the cache, their
// holders from the cycle state (buildState). A gang placed next to the shared claim
// "data" on n1 (its slots without the claim's devices) is stale once the claim is
// released or allocated on n2, and not while it is allocated on n1 or another admitted
// gang's slot on n1 allocates it. A gang whose own slot has the claim's devices
// allocates it, so it is not stale either.
func TestStaleClaimFromState(t *testing.T) {
	next := []v1alpha1.PodPlacement{ // placed next to "data": its devices are not in the slots
		{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0", "GPU-1"}},
		{PodSet: "main", Index: 1, Node: "n1", Devices: []string{"GPU-3", "GPU-4"}},
	}
	allocating := []v1alpha1.PodPlacement{ // slot 0 also has the claim's GPU
		{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0", "GPU-1", "GPU-2"}},
		{PodSet: "main", Index: 1, Node: "n1", Devices: []string{"GPU-3", "GPU-4"}},
	}
	other := []v1alpha1.PodPlacement{ // another gang, whose slot 0 allocates "data" on n1
		{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-5", "GPU-6", "GPU-7"}},
	}
	for _, tc := range []struct {
		name  string
		data  *resourcev1.ResourceClaim
		slots []v1alpha1.PodPlacement
		other bool // the other gang is admitted too
		stale bool
	}{
		{name: "allocated on the slots' node", data: dataClaim("n1", "gpu-2"), slots: next},
		{name: "released", data: dataClaim(""), slots: next, stale: true},
		{name: "allocated on another node", data: dataClaim("n2", "gpu-0"), slots: next, stale: true},
		{name: "released, the gang's own slot allocates it", data: dataClaim(""), slots: allocating},
		{name: "released, another admitted gang allocates it there", data: dataClaim(""), slots: next, other: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sharedWorld(t, tc.data)
			obj, model := admittedSharing("g", tc.slots...)
			models := map[string]*api.Workload{"g": model}
			w.workloads = []v1alpha1.Workload{obj}
			if tc.other {
				oobj, omodel := admittedSharing("o", other...)
				omodel.PodSets[0].Count = 1
				models["o"] = omodel
				w.workloads = append(w.workloads, oobj)
			}
			cs, err := buildState(w, func(obj *v1alpha1.Workload, _ int32) (*api.Workload, error) { return models[obj.Name], nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := gangClaimPlan{model: model, placements: tc.slots}
			why, stale := g.staleClaim(sharedClaimStates(w, cs, model, map[string]sharedClaimState{}))
			if stale != tc.stale {
				t.Errorf("stale %v (%q), want %v", stale, why, tc.stale)
			}
		})
	}
}
