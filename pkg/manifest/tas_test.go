package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// tasJob is a Job whose pod template carries annots (YAML lines under annotations).
func tasJob(annots ...string) string {
	return `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: 8
  template:
    metadata:
      annotations:
        ` + strings.Join(annots, "\n        ") + `
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
`
}

const annPath = "spec.template.metadata.annotations"

// Kueue's TAS annotations as the webhook reads them: each case loads one Job and wants
// either its pod set's topology request or one error (field and message fragment).
func TestTASAnnotations(t *testing.T) {
	layered := api.TopologyRequest{SliceLevel: "b", SliceSize: 4}
	layered.InnerSlices[0] = api.SliceLayer{Level: "r", Size: 2}
	three := api.TopologyRequest{Mode: api.TopologyRequired, Level: "dc", SliceLevel: "b", SliceSize: 8}
	three.InnerSlices = [api.MaxInnerSlices]api.SliceLayer{{Level: "r", Size: 4}, {Level: "h", Size: 2}}
	k := func(a string) string { return annPath + "[" + a + "]" }
	cases := []struct {
		name      string
		annots    []string
		want      *api.TopologyRequest
		wantField string
		wantMsg   string
	}{
		{name: "unconstrained true", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "true"`},
			want: &api.TopologyRequest{Mode: api.TopologyUnconstrained}},
		{name: "unconstrained false is no request", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "false"`}},
		{name: "unconstrained with slices is a slice request", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "true"`,
			`kueue.x-k8s.io/podset-slice-required-topology: r`, `kueue.x-k8s.io/podset-slice-size: "2"`},
			want: &api.TopologyRequest{Mode: api.TopologyUnconstrained, SliceLevel: "r", SliceSize: 2}},
		{name: "unconstrained not a boolean", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "yes"`},
			wantField: k(api.AnnotationUnconstrainedTopology), wantMsg: `"yes" is not a boolean`},
		{name: "unconstrained beside required", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "true"`, `kueue.x-k8s.io/podset-required-topology: r`},
			wantField: annPath, wantMsg: "set at most one of"},
		{name: "required and preferred", annots: []string{`kueue.x-k8s.io/podset-preferred-topology: r`, `kueue.x-k8s.io/podset-required-topology: r`},
			wantField: annPath, wantMsg: "set at most one of"},
		{name: "level not a label key", annots: []string{`kueue.x-k8s.io/podset-required-topology: "a b"`},
			wantField: k(api.AnnotationRequiredTopology), wantMsg: `"a b" is not a node-label key`},
		// The annotation reads, but one pod set alone is not a group (Kueue: exactly 2);
		// TestPodSetGroupLoads loads a two-set group.
		{name: "group of one pod set", annots: []string{`kueue.x-k8s.io/podset-required-topology: r`, `kueue.x-k8s.io/podset-group-name: g`},
			wantField: `pod set "main" annotations[` + api.AnnotationPodSetGroupName + `]`, wantMsg: "a group is exactly 2 pod sets"},
		{name: "group without a level", annots: []string{`kueue.x-k8s.io/podset-unconstrained-topology: "true"`, `kueue.x-k8s.io/podset-group-name: g`},
			wantField: k(api.AnnotationPodSetGroupName), wantMsg: "may not be set when neither"},
		{name: "group is a number", annots: []string{`kueue.x-k8s.io/podset-required-topology: r`, `kueue.x-k8s.io/podset-group-name: "42"`},
			wantField: k(api.AnnotationPodSetGroupName), wantMsg: `"42" must not be a number`},
		{name: "group with a slice", annots: []string{`kueue.x-k8s.io/podset-required-topology: r`, `kueue.x-k8s.io/podset-group-name: g`,
			`kueue.x-k8s.io/podset-slice-required-topology: h`, `kueue.x-k8s.io/podset-slice-size: "2"`},
			wantField: k(api.AnnotationPodSetGroupName), wantMsg: "may not be set when " + api.AnnotationSliceSize},
		{name: "slice size without level", annots: []string{`kueue.x-k8s.io/podset-slice-size: "2"`},
			wantField: k(api.AnnotationSliceSize), wantMsg: "may not be set when"},
		{name: "two layers", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology": "b", "size": 4}, {"topology": "r", "size": 2}]'`},
			want: &layered},
		{name: "three layers under a required level", annots: []string{`kueue.x-k8s.io/podset-required-topology: dc`,
			`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":8},{"topology":"r","size":4},{"topology":"h","size":2}]'`},
			want: &three},
		{name: "layers not JSON", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: 'b=4'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: "not a JSON array"},
		{name: "layer with an unknown field", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","sizes":4}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: `unknown field "sizes"`},
		{name: "data after the array", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":4}] []'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: "data after the array"},
		{name: "no layer", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: "0 layers: want 1 to 3"},
		{name: "four layers", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"a","size":8},{"topology":"b","size":4},{"topology":"c","size":2},{"topology":"d","size":1}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: "4 layers: want 1 to 3"},
		{name: "size zero", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":0}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints) + "[0].size", wantMsg: "want at least 1"},
		{name: "missing topology", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"size":2}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints) + "[0].topology", wantMsg: "names no level"},
		{name: "same level twice", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":4},{"topology":"b","size":2}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints) + "[1].topology", wantMsg: "b is also layer 0"},
		{name: "inner size does not divide", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":4},{"topology":"r","size":3}]'`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints) + "[1].size", wantMsg: "3 does not divide the size 4"},
		{name: "layers beside the single slice", annots: []string{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"b","size":4}]'`,
			`kueue.x-k8s.io/podset-slice-required-topology: r`, `kueue.x-k8s.io/podset-slice-size: "2"`},
			wantField: k(api.AnnotationSliceRequiredTopologyConstraints), wantMsg: "may not be set when " + api.AnnotationSliceRequiredTopology},
		{name: "layers beside a group", annots: []string{`kueue.x-k8s.io/podset-required-topology: r`, `kueue.x-k8s.io/podset-group-name: g`,
			`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology":"h","size":4}]'`},
			wantField: k(api.AnnotationPodSetGroupName), wantMsg: "may not be set when " + api.AnnotationSliceRequiredTopologyConstraints},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := docs(queueSetup(), tasJob(tc.annots...))
			if tc.wantField != "" {
				list := loadErrors(t, in)
				for _, e := range list {
					if e.Field == tc.wantField && strings.Contains(e.Msg, tc.wantMsg) && e.Kind == "Job" && e.Name == "ns/j" && e.Source.File == "in.yaml" {
						return
					}
				}
				t.Fatalf("errors = %v, want one at %s with %q", list, tc.wantField, tc.wantMsg)
			}
			ws := loadWorkloads(t, tasJob(tc.annots...))
			got := ws[0].PodSets[0].Topology
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("topology = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Kueue's group rules across a workload's pod sets: exactly 2 pod sets, one of a single
// pod, the same required or preferred level. Each case wants the error fragments.
func TestPodSetGroupRules(t *testing.T) {
	set := func(name string, n int32, mode api.TopologyMode, level, group string) api.PodSet {
		return api.PodSet{Name: name, Count: n, Topology: &api.TopologyRequest{Mode: mode, Level: level, Group: group}}
	}
	req, pref := api.TopologyRequired, api.TopologyPreferred
	cases := []struct {
		name string
		sets []api.PodSet
		want []string // fragments, one per error; none: valid
	}{
		{"leader and workers", []api.PodSet{set("leader", 1, req, "r", "g"), set("workers", 4, req, "r", "g")}, nil},
		{"two groups", []api.PodSet{set("l1", 1, pref, "r", "a"), set("w1", 4, pref, "r", "a"), set("l2", 1, req, "b", "b"), set("w2", 2, req, "b", "b")}, nil},
		{"one pod set", []api.PodSet{set("leader", 1, req, "r", "g"), set("workers", 4, req, "r", "")},
			[]string{`pod set "leader" annotations[kueue.x-k8s.io/podset-group-name]: group "g" has 1 pod set(s)`}},
		{"three pod sets", []api.PodSet{set("a", 1, req, "r", "g"), set("b", 1, req, "r", "g"), set("c", 1, req, "r", "g")},
			[]string{`pod set "a"`, `pod set "b"`, `pod set "c"`}},
		{"no single-pod set", []api.PodSet{set("leader", 2, req, "r", "g"), set("workers", 4, req, "r", "g")},
			[]string{`group "g": one of its pod sets must have a single pod, got 2 and 4 pods`}},
		{"levels disagree", []api.PodSet{set("leader", 1, req, "r", "g"), set("workers", 4, req, "b", "g")},
			[]string{`pod set "workers" annotations[kueue.x-k8s.io/podset-group-name]: group "g": Required topology "b" disagrees with pod set "leader"'s Required topology "r"`}},
		{"modes disagree", []api.PodSet{set("leader", 1, req, "r", "g"), set("workers", 4, pref, "r", "g")},
			[]string{`Preferred topology "r" disagrees`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var list ErrorList
			checkPodSetGroups(&api.Workload{PodSets: tc.sets}, errs{list: &list, kind: "LeaderWorkerSet", name: "ns/lws"})
			if len(list) != len(tc.want) {
				t.Fatalf("errors = %v, want %d", list, len(tc.want))
			}
			for i, e := range list {
				if !strings.Contains(e.Error(), tc.want[i]) || !strings.Contains(e.Error(), "LeaderWorkerSet ns/lws") {
					t.Errorf("error %d = %q, want %q", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}

// A JobSet's leader and workers in one group load with the group on both pod sets.
func TestPodSetGroupLoads(t *testing.T) {
	js := `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicatedJobs:
  - name: leader
    template: {spec: {template: {metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: r, kueue.x-k8s.io/podset-group-name: g}},
      spec: {containers: [{name: d, image: x, resources: {requests: {cpu: "1"}}}]}}}}
  - name: workers
    template:
      spec:
        parallelism: 4
        template:
          metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: r, kueue.x-k8s.io/podset-group-name: g}}
          spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]}
`
	w := loadWorkloads(t, js)[0]
	for _, ps := range w.PodSets {
		want := api.TopologyRequest{Mode: api.TopologyRequired, Level: "r", Group: "g"}
		if ps.Topology == nil || *ps.Topology != want {
			t.Errorf("pod set %s topology = %+v, want %+v", ps.Name, ps.Topology, want)
		}
	}
}
