package controller

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestConvertHighestTierAllowed: a Volcano tier bound survives the Workload object (as
// topologyRequest.highestTierAllowed) in both modes; a negative one written without the
// CRD's validation is refused by field.
func TestConvertHighestTierAllowed(t *testing.T) {
	for _, in := range []api.TopologyRequest{
		{Mode: api.TopologyRequired, Level: api.HyperNodeTierLabel(1), HighestTierAllowed: 1},
		{Mode: api.TopologyPreferred, Level: api.HyperNodeTierLabel(1), HighestTierAllowed: 3},
		{Mode: api.TopologyRequired, HighestTierAllowed: 2}, // read with no HyperNodes: no level
	} {
		raw, err := json.Marshal(fromAPITopology(&in))
		if err != nil {
			t.Fatal(err)
		}
		if want := `"highestTierAllowed":` + strconv.Itoa(int(in.HighestTierAllowed)); !strings.Contains(string(raw), want) {
			t.Errorf("JSON %s lacks %s", raw, want)
		}
		var obj v1alpha1.PodSetTopologyRequest
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		back, err := toAPITopology(&obj, "spec.podSets[0].topologyRequest")
		if err != nil {
			t.Fatal(err)
		}
		if back == nil || *back != in {
			t.Errorf("round trip = %+v, want %+v", back, in)
		}
	}
	_, err := toAPITopology(&v1alpha1.PodSetTopologyRequest{Required: ptr.To("x"), HighestTierAllowed: ptr.To(int32(-1))}, "spec.podSets[0].topologyRequest")
	if err == nil || !strings.Contains(err.Error(), "spec.podSets[0].topologyRequest.highestTierAllowed: -1 is negative") {
		t.Errorf("negative tier: error %v, want one naming the field", err)
	}
}

// twoRacks resolves racks ra {a0} and rb {b0, b1} (tier 1, named rack) under spine
// (tier 2) as the cache does.
func twoRacks(t *testing.T) manifest.LiveHyperNodes {
	t.Helper()
	objs := []*unstructured.Unstructured{hyperNodeObj("ra", 1, "a0"), hyperNodeObj("rb", 1, "b0", "b1"), hyperNodeObj("spine", 2, "ra", "rb")}
	for _, o := range objs[:2] {
		if err := unstructured.SetNestedField(o.Object, "rack", "spec", "tierName"); err != nil {
			t.Fatal(err)
		}
	}
	res, err := manifest.ResolveHyperNodes("cluster HyperNode", objs, []manifest.NodeLabels{{Name: "a0"}, {Name: "b0"}, {Name: "b1"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHyperNodeTopologyInQueueObjects: the resolved HyperNodes' Topology joins a copy
// of the queue objects (the shared ones keep theirs); a cluster Topology of that name
// keeps its place, with a warning; no HyperNodes, no change.
func TestHyperNodeTopologyInQueueObjects(t *testing.T) {
	rack := api.Topology{Meta: api.Meta{Name: "racks"}, Levels: []string{"rack"}}
	taken := api.Topology{Meta: api.Meta{Name: api.HyperNodeTopology}, Levels: []string{"x"}}
	wantHN := []string{api.HyperNodeTierLabel(2), api.HyperNodeTierLabel(1)}
	for _, tc := range []struct {
		name       string
		resolved   manifest.LiveHyperNodes
		have       []api.Topology
		wantLevels [][]string
		wantWarn   bool
	}{
		{name: "added", resolved: twoRacks(t), have: []api.Topology{rack}, wantLevels: [][]string{{"rack"}, wantHN}},
		{name: "name taken", resolved: twoRacks(t), have: []api.Topology{taken}, wantLevels: [][]string{{"x"}}, wantWarn: true},
		{name: "no HyperNodes", have: []api.Topology{rack}, wantLevels: [][]string{{"rack"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := &api.Objects{Topologies: tc.have}
			s := hyperNodeStore{resolved: tc.resolved}
			got, warn := s.withTopology(objs)
			var levels [][]string
			for _, topo := range got.Topologies {
				levels = append(levels, topo.Levels)
			}
			if !reflect.DeepEqual(levels, tc.wantLevels) {
				t.Errorf("topology levels %v, want %v", levels, tc.wantLevels)
			}
			if (len(warn) > 0) != tc.wantWarn {
				t.Errorf("warnings %v, want some: %v", warn, tc.wantWarn)
			}
			if len(objs.Topologies) != len(tc.have) {
				t.Errorf("the shared queue objects changed: %d topologies, had %d", len(objs.Topologies), len(tc.have))
			}
		})
	}
}

// TestPodGroupGangTopology: a PodGroup's networkTopology reaches the gang Workload's
// pod set, read against the HyperNodes the cache resolved (highestTierName becomes the
// tier, the level the narrowest HyperNode tier); a pod's own topology annotation wins;
// a tier name no HyperNode has refuses the gang, naming the PodGroup and field.
func TestPodGroupGangTopology(t *testing.T) {
	req := func(mode api.TopologyMode, tier int32) *v1alpha1.PodSetTopologyRequest {
		return fromAPITopology(&api.TopologyRequest{Mode: mode, Level: api.HyperNodeTierLabel(1), HighestTierAllowed: tier})
	}
	for _, tc := range []struct {
		name    string
		nt      map[string]any
		podAnn  map[string]string
		want    *v1alpha1.PodSetTopologyRequest
		wantErr []string
	}{
		{name: "none"},
		{name: "hard tier 1", nt: map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}, want: req(api.TopologyRequired, 1)},
		{name: "soft tier 2", nt: map[string]any{"mode": "soft", "highestTierAllowed": int64(2)}, want: req(api.TopologyPreferred, 2)},
		{name: "tier name", nt: map[string]any{"highestTierName": "rack"}, want: req(api.TopologyRequired, 1)},
		{name: "pod annotation wins", nt: map[string]any{"highestTierAllowed": int64(2)},
			podAnn: map[string]string{api.AnnotationRequiredTopology: testRack}, want: &v1alpha1.PodSetTopologyRequest{Required: ptr.To(testRack)}},
		{name: "unknown tier name", nt: map[string]any{"highestTierName": "row"},
			wantErr: []string{"PodGroup ns/pg", "spec.networkTopology.highestTierName", `unknown tier "row"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{"minMember": int64(2), "queue": "lq"}
			if tc.nt != nil {
				spec["networkTopology"] = tc.nt
			}
			pg := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "pg", "namespace": "ns"}, "spec": spec}}
			pg.SetGroupVersionKind(podGroupGVK)
			cache := newStateCache()
			cache.hyperNodes.resolved = twoRacks(t)
			ctl := &Controller{direct: fake.NewClientBuilder().WithObjects(pg).Build(), cache: cache}
			var pods []*corev1.Pod
			for _, name := range []string{"p-0", "p-1"} {
				p := k8s.MakePod("ns", name).PodGroup("pg").Obj()
				for k, v := range tc.podAnn {
					p.Annotations[k] = v
				}
				pods = append(pods, p)
			}
			wl, err := ctl.gangWorkload(context.Background(), groupPodGangs(pods)[0])
			if tc.wantErr != nil {
				assertErrNames(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wl == nil {
				t.Fatal("no Workload for a complete gang")
			}
			if got := wl.Spec.PodSets[0].TopologyRequest; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pod set topology = %+v, want %+v", got, tc.want)
			}
		})
	}
}
