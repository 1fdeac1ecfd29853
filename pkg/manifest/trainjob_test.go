package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// trainJob is a TrainJob of namespace ns in LocalQueue q naming a runtime, with the
// trainer fields given (YAML flow mapping entries, may be empty).
func trainJobYAML(name, runtimeRef, trainer string) string {
	out := fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: %s, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec:\n  runtimeRef: %s\n", name, runtimeRef)
	if trainer != "" {
		out += "  trainer: {" + trainer + "}\n"
	}
	return out
}

// runtimeYAML is a runtime of the given kind and name (namespace ns for a
// TrainingRuntime) with the mlPolicy and replicated jobs given.
func runtimeYAML(kind, name, mlPolicy, jobs string) string {
	ns := ""
	if kind == "TrainingRuntime" {
		ns = ", namespace: ns"
	}
	return fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: %s\nmetadata: {name: %s%s}\nspec:\n  mlPolicy: %s\n  template:\n    spec:\n      replicatedJobs:\n%s", kind, name, ns, mlPolicy, jobs)
}

// replicatedJobYAML is one replicated job of a runtime: its ancestor label (none when
// empty), parallelism (none when 0) and a container named c asking for gpus GPUs.
func replicatedJobYAML(name, ancestor string, parallelism, gpus int, c string) string {
	labels := ""
	if ancestor != "" {
		labels = fmt.Sprintf("metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: %s}}, ", ancestor)
	}
	par := ""
	if parallelism > 0 {
		par = fmt.Sprintf("parallelism: %d, ", parallelism)
	}
	return fmt.Sprintf("      - {name: %s, template: {%sspec: {%stemplate: {spec: {containers: [{name: %s, image: x, resources: {limits: {nvidia.com/gpu: %d}}}]}}}}}\n", name, labels, par, c, gpus)
}

// TestTrainJobPodSets: a TrainJob is a workload whose pod sets are its runtime's
// replicated jobs, with Trainer v2.0's node count and resourcesPerNode applied.
func TestTrainJobPodSets(t *testing.T) {
	torch := runtimeYAML("ClusterTrainingRuntime", "torch", "{numNodes: 2, torch: {numProcPerNode: auto}}",
		replicatedJobYAML("dataset-initializer", "dataset-initializer", 0, 0, "init")+
			replicatedJobYAML("node", "trainer", 0, 1, "node"))
	mpi := runtimeYAML("ClusterTrainingRuntime", "mpi", "{numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, runLauncherAsNode: true}}",
		replicatedJobYAML("launcher", "trainer", 0, 0, "node")+replicatedJobYAML("node", "", 0, 1, "node"))
	tests := []struct {
		name, input string
		want        string // workloadsText
	}{
		{
			name:  "the runtime's numNodes without one in the TrainJob; initializers are pod sets",
			input: docs(torch, trainJobYAML("tj", "{name: torch}", "")),
			want:  "ns/tj owner=TrainJob/tj dataset-initializer:1/0: node:2/0:nvidia.com/gpu=1 gang=3",
		},
		{
			name:  "numNodes and resourcesPerNode of the TrainJob replace the trainer job's",
			input: docs(trainJobYAML("tj", "{name: torch}", "numNodes: 4, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}"), torch),
			want:  "ns/tj owner=TrainJob/tj dataset-initializer:1/0: node:4/0:nvidia.com/gpu=8 gang=5",
		},
		{
			name:  "MPI: numNodes goes to the node job, less the launcher that runs as a node",
			input: docs(mpi, trainJobYAML("tj", "{name: mpi}", "numNodes: 4, resourcesPerNode: {requests: {cpu: 2}}")),
			want:  "ns/tj owner=TrainJob/tj launcher:1/0:cpu=2 node:3/0:nvidia.com/gpu=1 gang=4",
		},
		{
			name: "a namespaced TrainingRuntime; a plain runtime's job keeps its parallelism",
			input: docs(runtimeYAML("TrainingRuntime", "plain", "{numNodes: 3}",
				replicatedJobYAML("prep", "", 2, 0, "c")+replicatedJobYAML("node", "trainer", 5, 2, "node")),
				trainJobYAML("tj", "{name: plain, kind: TrainingRuntime}", "")),
			want: "ns/tj owner=TrainJob/tj prep:2/0: node:3/0:nvidia.com/gpu=2 gang=5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workloadsText(t, tt.input); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestTrainJobErrors: a missing runtime and a bad runtime are errors naming the file,
// line, object and field.
func TestTrainJobErrors(t *testing.T) {
	tests := []struct {
		name, input string
		want        []string // "line kind name field: message", lines counted in input
	}{
		{
			name:  "the runtime is not among the objects",
			input: trainJobYAML("tj", "{name: torch-distributed}", "numNodes: 2"),
			want:  []string{`5 TrainJob ns/tj spec.runtimeRef.name: ClusterTrainingRuntime "torch-distributed" not found`},
		},
		{
			name: "a TrainingRuntime of another namespace is not found",
			input: docs(strings.Replace(runtimeYAML("TrainingRuntime", "r", "{numNodes: 1}", replicatedJobYAML("node", "trainer", 0, 1, "node")), "namespace: ns", "namespace: other", 1),
				trainJobYAML("tj", "{name: r, kind: TrainingRuntime}", "")),
			want: []string{`15 TrainJob ns/tj spec.runtimeRef.name: TrainingRuntime "r" not found`},
		},
		{
			name: "a runtime without jobs, with a typo and a bad node count: all problems at once",
			input: `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: r}
spec:
  mlPolicy: {numNodes: 0, torch: {numProcsPerNode: 2}}
  template: {spec: {replicatedJobs: []}}
`,
			want: []string{
				"5 ClusterTrainingRuntime r spec.mlPolicy.numNodes: 0: a runtime runs on at least one node",
				`5 ClusterTrainingRuntime r spec.mlPolicy.torch.numProcsPerNode: unknown field "numProcsPerNode"`,
				"6 ClusterTrainingRuntime r spec.template.spec.replicatedJobs: a runtime needs at least one replicated job",
			},
		},
		{
			name: "a runtime's jobs listed twice, a bad node count",
			input: runtimeYAML("ClusterTrainingRuntime", "r", "{numNodes: 0}",
				replicatedJobYAML("node", "trainer", 0, 1, "node")+replicatedJobYAML("node", "", 0, 1, "node")),
			want: []string{
				"5 ClusterTrainingRuntime r spec.mlPolicy.numNodes: 0: a runtime runs on at least one node",
				`10 ClusterTrainingRuntime r spec.template.spec.replicatedJobs[1].name: replicated job "node" is listed twice`,
			},
		},
		{
			name: "a runtime job with negative replicas",
			input: runtimeYAML("ClusterTrainingRuntime", "r", "{numNodes: 1}",
				"      - {name: prep, replicas: -1, template: {spec: {template: {spec: {containers: [{name: c, image: x}]}}}}}\n"),
			want: []string{"9 ClusterTrainingRuntime r spec.template.spec.replicatedJobs[0].replicas: -1 is negative"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantProblems(t, tt.input, tt.want) })
	}
}

// TestWorkloadOfTrainJobMatchesFiles: a TrainJob and its runtime read from a cluster
// (decoded JSON, unknown fields of newer Trainer releases ignored) become the workload
// that the same objects in files make.
func TestWorkloadOfTrainJobMatchesFiles(t *testing.T) {
	rt := runtimeYAML("ClusterTrainingRuntime", "torch", "{numNodes: 2, torch: {numProcPerNode: auto}}",
		replicatedJobYAML("model-initializer", "model-initializer", 0, 0, "init")+replicatedJobYAML("node", "trainer", 0, 1, "node"))
	job := trainJobYAML("tj", "{name: torch}", "numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 2}}")
	fromFile := loadWorkloads(t, docs(rt, job))
	objOf := func(text string) map[string]any {
		docs, perr := parseDocuments("x.yaml", []byte(text))
		if perr != nil || len(docs) != 1 {
			t.Fatalf("parse: %v", perr)
		}
		return docs[0].v.toJSON().(map[string]any)
	}
	runtime, trainJob := objOf(rt), objOf(job)
	trainJob["spec"].(map[string]any)["futureField"] = true // a field of a newer Trainer
	fromCluster, err := WorkloadOfTrainJob("cluster", trainJob, runtime)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := podSetsText(*fromCluster), podSetsText(fromFile[0]); got != want || got != "model-initializer:1/0: node:3/0:nvidia.com/gpu=2" {
		t.Errorf("cluster %s, file %s, want both model-initializer:1/0: node:3/0:nvidia.com/gpu=2", got, want)
	}
	if _, err := WorkloadOfObject("cluster", trainJob); err == nil || !strings.Contains(err.Error(), "WorkloadOfTrainJob") {
		t.Errorf("WorkloadOfObject on a TrainJob: %v, want an error pointing at WorkloadOfTrainJob", err)
	}
	if _, err := WorkloadOfTrainJob("cluster", trainJob, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}); err == nil ||
		!strings.Contains(err.Error(), `ClusterTrainingRuntime "torch" not found`) {
		t.Errorf("a TrainJob without its runtime: %v, want the runtime not found", err)
	}
}

// TestTrainJobPodSpecOverrides: the node selector and tolerations of a TrainJob's
// podSpecOverrides reach the pod sets of the jobs they name, merged as Trainer merges
// them; a target the runtime does not have is an error at its field.
func TestTrainJobPodSpecOverrides(t *testing.T) {
	rt := runtimeYAML("ClusterTrainingRuntime", "torch", "{numNodes: 1}",
		"      - {name: init, template: {spec: {template: {spec: {nodeSelector: {pool: cpu}, containers: [{name: c, image: x}]}}}}}\n"+
			"      - {name: node, template: {metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, spec: {template: {spec: {nodeSelector: {pool: gpu, zone: a}, tolerations: [{key: old, operator: Exists}], containers: [{name: node, image: x}]}}}}}\n")
	job := trainJobYAML("tj", "{name: torch}", "") + `  podSpecOverrides:
  - targetJobs: [{name: node}]
    nodeSelector: {zone: b}
    tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
`
	objs, err := LoadBytes("in.yaml", []byte(docs(queueSetup(), rt, job)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ps := range objs.Workloads[0].PodSets {
		var tols []string
		for _, tol := range ps.Tolerations {
			tols = append(tols, tol.Key)
		}
		got[ps.Name] = fmt.Sprintf("%v %v", ps.NodeSelector, tols)
	}
	want := map[string]string{"init": "map[pool:cpu] []", "node": "map[pool:gpu zone:b] [spot]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pod sets %v, want %v", got, want)
	}

	bad := strings.Replace(job, "[{name: node}]", "[{name: nodes}]", 1)
	var msgs []string
	for _, e := range loadErrors(t, docs(queueSetup(), rt, bad)) {
		msgs = append(msgs, e.Field+": "+e.Msg)
	}
	if w := `spec.podSpecOverrides[0].targetJobs[0].name: "nodes": ClusterTrainingRuntime "torch" has no replicated job of this name`; strings.Join(msgs, "\n") != w {
		t.Errorf("errors %v, want %s", msgs, w)
	}
}

// templateOverrideRuntime is a runtime with an "init" job (node selector pool: cpu)
// and a trainer "node" job (pool: gpu, zone: a; toleration old; a required node
// affinity on the GPU product).
func templateOverrideRuntime() string {
	return runtimeYAML("ClusterTrainingRuntime", "torch", "{numNodes: 1}",
		"      - {name: init, template: {spec: {template: {spec: {nodeSelector: {pool: cpu}, containers: [{name: c, image: x}]}}}}}\n"+
			"      - {name: node, template: {metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, spec: {template: {spec: {nodeSelector: {pool: gpu, zone: a}, "+
			"tolerations: [{key: old, operator: Exists}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: product, operator: In, values: [h100]}]}]}}}, "+
			"containers: [{name: node, image: x}]}}}}}\n")
}

// podSetPlacementText is each pod set's node selector, tolerations and required node
// affinity, by pod set name.
func podSetPlacementText(w api.Workload) map[string]string {
	out := map[string]string{}
	for _, ps := range w.PodSets {
		var tols, terms []string
		for _, tol := range ps.Tolerations {
			tols = append(tols, tol.Key)
		}
		if ps.Affinity != nil {
			for _, term := range ps.Affinity.NodeSelectorTerms {
				for _, e := range term.MatchExpressions {
					terms = append(terms, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
				}
			}
		}
		out[ps.Name] = fmt.Sprintf("%v %v %v", ps.NodeSelector, tols, terms)
	}
	return out
}

// TestTrainJobPodTemplateOverrides: Trainer v2.1's podTemplateOverrides reach the pod
// sets of the jobs they name: node selector keys merged, tolerations replaced, the
// node affinity's required terms replaced; fields that do not bear on placement are
// read and leave the pod sets alone; a second TrainJob on the same runtime without
// overrides sees the runtime as it is.
func TestTrainJobPodTemplateOverrides(t *testing.T) {
	overridden := trainJobYAML("tj", "{name: torch}", "") + `  podTemplateOverrides:
  - targetJobs: [{name: node}]
    metadata: {labels: {team: a}, annotations: {note: x}}
    spec:
      nodeSelector: {zone: b}
      tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: product, operator: In, values: [b200]}]}]}}}
      serviceAccountName: trainer
      schedulingGates: [{name: wait}]
      volumes: [{name: data, emptyDir: {}}]
      containers: [{name: node, env: [{name: A, value: "1"}], volumeMounts: [{name: data, mountPath: /data}]}]
`
	plain := trainJobYAML("tj-plain", "{name: torch}", "")
	got := map[string]map[string]string{}
	for _, w := range loadWorkloads(t, docs(templateOverrideRuntime(), overridden, plain)) {
		got[w.Name] = podSetPlacementText(w)
	}
	want := map[string]map[string]string{
		"tj":       {"init": "map[pool:cpu] [] []", "node": "map[pool:gpu zone:b] [spot] [product In [b200]]"},
		"tj-plain": {"init": "map[pool:cpu] [] []", "node": "map[pool:gpu zone:a] [old] [product In [h100]]"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pod sets\n got %v\nwant %v", got, want)
	}
}

// TestTrainJobPodTemplateOverrideErrors: an override naming a replicated job the
// runtime lacks, one naming none, and a misspelt field are errors naming the file, the
// line, the TrainJob and the field.
func TestTrainJobPodTemplateOverrideErrors(t *testing.T) {
	job := trainJobYAML("tj", "{name: torch}", "")
	tests := []struct {
		name, overrides string
		want            string // "kind name field: message"
	}{
		{
			name:      "unknown target job",
			overrides: "  - targetJobs: [{name: nodes}]\n    spec: {nodeSelector: {zone: b}}\n",
			want:      `TrainJob ns/tj spec.podTemplateOverrides[0].targetJobs[0].name: "nodes": ClusterTrainingRuntime "torch" has no replicated job of this name`,
		},
		{
			name:      "no target job",
			overrides: "  - targetJobs: []\n    spec: {nodeSelector: {zone: b}}\n",
			want:      `TrainJob ns/tj spec.podTemplateOverrides[0].targetJobs: missing: an override names the replicated jobs of ClusterTrainingRuntime "torch" it changes`,
		},
		{
			name:      "misspelt field",
			overrides: "  - targetJobs: [{name: node}]\n    spec: {nodeSelecter: {zone: b}}\n",
			want:      `TrainJob ns/tj spec.podTemplateOverrides[0].spec.nodeSelecter: unknown field "nodeSelecter"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range loadErrors(t, docs(queueSetup(), templateOverrideRuntime(), job+"  podTemplateOverrides:\n"+tt.overrides)) {
				if e.Source.File != "in.yaml" || e.Source.Line == 0 {
					t.Errorf("error %v: want it at a line of in.yaml", e)
				}
				got = append(got, fmt.Sprintf("%s %s %s: %s", e.Kind, e.Name, e.Field, e.Msg))
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
