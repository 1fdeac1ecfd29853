package controller

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const testRack = "topology.gantry.dev/rack"

// TestTopologyConvertRoundTrip: every topology request the reader can make survives
// fromAPITopology, the Workload object's JSON and toAPITopology, under Kueue's field
// names.
func TestTopologyConvertRoundTrip(t *testing.T) {
	threeLayers := api.TopologyRequest{Mode: api.TopologyRequired, Level: "block", SliceLevel: testRack, SliceSize: 8}
	threeLayers.InnerSlices[0] = api.SliceLayer{Level: "kubernetes.io/hostname", Size: 4}
	threeLayers.InnerSlices[1] = api.SliceLayer{Level: "gpu.gantry.dev/nvlink", Size: 2}
	twoLayers := api.TopologyRequest{SliceLevel: testRack, SliceSize: 4}
	twoLayers.InnerSlices[0] = api.SliceLayer{Level: "kubernetes.io/hostname", Size: 2}
	for _, tc := range []struct {
		name     string
		in       api.TopologyRequest
		wantJSON []string // fragments of the object's JSON
		notJSON  []string
	}{
		{name: "required", in: api.TopologyRequest{Mode: api.TopologyRequired, Level: testRack},
			wantJSON: []string{`"required":"` + testRack + `"`}, notJSON: []string{"unconstrained"}},
		{name: "preferred in a group", in: api.TopologyRequest{Mode: api.TopologyPreferred, Level: testRack, Group: "leader-workers"},
			wantJSON: []string{`"preferred":"` + testRack + `"`, `"podSetGroupName":"leader-workers"`}},
		{name: "unconstrained", in: api.TopologyRequest{Mode: api.TopologyUnconstrained},
			wantJSON: []string{`"unconstrained":true`}, notJSON: []string{"required", "preferred"}},
		{name: "one slice layer", in: api.TopologyRequest{Mode: api.TopologyPreferred, Level: "block", SliceLevel: testRack, SliceSize: 4},
			wantJSON: []string{`"podSetSliceRequiredTopology":"` + testRack + `"`, `"podSetSliceSize":4`},
			notJSON:  []string{"podsetSliceRequiredTopologyConstraints"}},
		{name: "three slice layers", in: threeLayers,
			wantJSON: []string{`"podsetSliceRequiredTopologyConstraints":[{"topology":"` + testRack + `","size":8},` +
				`{"topology":"kubernetes.io/hostname","size":4},{"topology":"gpu.gantry.dev/nvlink","size":2}]`},
			notJSON: []string{"podSetSliceRequiredTopology", "podSetSliceSize"}},
		{name: "two slice layers, no level", in: twoLayers,
			wantJSON: []string{`"podsetSliceRequiredTopologyConstraints":[{"topology":"` + testRack + `","size":4},{"topology":"kubernetes.io/hostname","size":2}]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(fromAPITopology(&tc.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.wantJSON {
				if !strings.Contains(string(raw), w) {
					t.Errorf("JSON %s lacks %s", raw, w)
				}
			}
			for _, w := range tc.notJSON {
				if strings.Contains(string(raw), w) {
					t.Errorf("JSON %s has %s", raw, w)
				}
			}
			var obj v1alpha1.PodSetTopologyRequest
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatal(err)
			}
			back, err := toAPITopology(&obj, "spec.podSets[0].topologyRequest")
			if err != nil {
				t.Fatal(err)
			}
			if back == nil || *back != tc.in {
				t.Errorf("round trip = %+v, want %+v", back, tc.in)
			}
		})
	}
	if fromAPITopology(nil) != nil {
		t.Error("no request written as a request")
	}
}

// TestTopologyConvertRefusesContradictions: a Workload object the CRD would refuse
// (written without its validation) is refused by field, not guessed at.
func TestTopologyConvertRefusesContradictions(t *testing.T) {
	layer := func(level string, size int32) v1alpha1.PodsetSliceRequiredTopologyConstraint {
		return v1alpha1.PodsetSliceRequiredTopologyConstraint{Topology: level, Size: size}
	}
	for _, tc := range []struct {
		name string
		in   v1alpha1.PodSetTopologyRequest
		want string
	}{
		{name: "layers beside a slice", in: v1alpha1.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To(testRack),
			PodsetSliceRequiredTopologyConstraints: []v1alpha1.PodsetSliceRequiredTopologyConstraint{layer(testRack, 2)}},
			want: "topologyRequest.podsetSliceRequiredTopologyConstraints: may not be set beside"},
		{name: "four layers", in: v1alpha1.PodSetTopologyRequest{PodsetSliceRequiredTopologyConstraints: []v1alpha1.PodsetSliceRequiredTopologyConstraint{
			layer("a", 8), layer("b", 4), layer("c", 2), layer("d", 1)}}, want: "4 layers: want 1 to 3"},
		{name: "size 0", in: v1alpha1.PodSetTopologyRequest{PodsetSliceRequiredTopologyConstraints: []v1alpha1.PodsetSliceRequiredTopologyConstraint{
			layer("a", 4), layer("b", 0)}}, want: "podsetSliceRequiredTopologyConstraints[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toAPITopology(&tc.in, "spec.podSets[0].topologyRequest")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestTopologyJobRoundTrip: a Job's TAS annotations, read by the shared reader, come back
// from its Workload object as the reader made them (what the engine places on a
// cluster is what the simulator places).
func TestTopologyJobRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		ann  map[string]string
		mode api.TopologyMode
	}{
		{name: "unconstrained", ann: map[string]string{api.AnnotationUnconstrainedTopology: "true"}, mode: api.TopologyUnconstrained},
		{name: "slice layers", ann: map[string]string{api.AnnotationRequiredTopology: "block",
			api.AnnotationSliceRequiredTopologyConstraints: `[{"topology":"` + testRack + `","size":4},{"topology":"kubernetes.io/hostname","size":2}]`},
			mode: api.TopologyRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := k8s.MakeJob("ns", "j").Queue("lq").Pods(8).GPUs("1").Obj()
			job.Spec.Template.Annotations = tc.ann
			model, err := manifest.WorkloadOfJob(objectSource, job)
			if err != nil {
				t.Fatal(err)
			}
			want := model.PodSets[0].Topology
			if want == nil || want.Mode != tc.mode {
				t.Fatalf("reader made %+v, want mode %s", want, tc.mode)
			}
			wl, err := WorkloadForJob(job)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ToAPIWorkload(wl, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.PodSets[0].Topology; !reflect.DeepEqual(got, want) {
				t.Errorf("from the Workload object: %+v, want %+v", got, want)
			}
		})
	}
}

// TestTopologyGangAnnotations: a plain-pod gang's TAS annotations are read with the
// loader's rules; a bad one refuses the gang, naming the pod and the annotation.
func TestTopologyGangAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		want    *v1alpha1.PodSetTopologyRequest
		wantErr []string
	}{
		{name: "none", ann: nil},
		{name: "required", ann: map[string]string{api.AnnotationRequiredTopology: testRack},
			want: &v1alpha1.PodSetTopologyRequest{Required: ptr.To(testRack)}},
		{name: "unconstrained", ann: map[string]string{api.AnnotationUnconstrainedTopology: "true"},
			want: &v1alpha1.PodSetTopologyRequest{Unconstrained: ptr.To(true)}},
		{name: "unconstrained not a boolean", ann: map[string]string{api.AnnotationUnconstrainedTopology: "yes"},
			wantErr: []string{"Pod ns/g-0", "metadata.annotations[" + api.AnnotationUnconstrainedTopology + "]", "not a boolean"}},
		{name: "slice size not a number", ann: map[string]string{api.AnnotationRequiredTopology: testRack,
			api.AnnotationSliceRequiredTopology: "kubernetes.io/hostname", api.AnnotationSliceSize: "two"},
			wantErr: []string{"Pod ns/g-0", "metadata.annotations[" + api.AnnotationSliceSize + "]", "not a positive integer"}},
		{name: "required and preferred", ann: map[string]string{api.AnnotationRequiredTopology: testRack, api.AnnotationPreferredTopology: testRack},
			wantErr: []string{"Pod ns/g-0", "set at most one of"}},
		{name: "group of one pod set", ann: map[string]string{api.AnnotationRequiredTopology: testRack, api.AnnotationPodSetGroupName: "g"},
			wantErr: []string{"Pod ns/g-0", api.AnnotationPodSetGroupName, "exactly 2 pod sets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for _, name := range []string{"g-0", "g-1"} {
				p := k8s.MakePod("ns", name).Queue("lq").Gang("g", "2").Obj()
				for k, v := range tc.ann {
					p.Annotations[k] = v
				}
				pods = append(pods, p)
			}
			wl, err := (&Controller{}).gangWorkload(context.Background(), groupPodGangs(pods)[0])
			if tc.wantErr != nil {
				assertErrNames(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := wl.Spec.PodSets[0].TopologyRequest; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("topology request %+v, want %+v", got, tc.want)
			}
		})
	}
}
