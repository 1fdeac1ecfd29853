package manifest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
)

// loadWorkloads loads the queue setup plus input and returns the workloads.
func loadWorkloads(t *testing.T, input string) []api.Workload {
	t.Helper()
	objs, err := LoadBytes("in.yaml", []byte(docs(queueSetup(), input)))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return objs.Workloads
}

// podSetsText renders pod sets as "name:count/min:requests" for compact comparison.
func podSetsText(w api.Workload) string {
	parts := make([]string, len(w.PodSets))
	for i, ps := range w.PodSets {
		parts[i] = fmt.Sprintf("%s:%d/%d:%s", ps.Name, ps.Count, ps.MinCount, ps.Requests)
	}
	return strings.Join(parts, " ")
}

func TestJobKindConversion(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// wantOwner is the workload's owner kind; wantSets its pod sets as
		// "name:count/minCount:requests"; wantGang its gang size; wantPriority the
		// resolved priority value.
		wantOwner    string
		wantSets     string
		wantGang     int32
		wantPriority int32
	}{
		{
			name:      "Job: parallelism capped by completions, GPU limit used as request",
			input:     strings.Replace(k8s.MakeJob("ns", "j").KueueQueue("q").Priority("high").Parallelism(4).Request("cpu", "2").Limit("nvidia.com/gpu", "2").YAML(), "spec:\n", "spec:\n  completions: 3\n", 1),
			wantOwner: "Job", wantSets: "main:3/0:cpu=2,nvidia.com/gpu=2", wantGang: 3, wantPriority: 500,
		},
		{
			name:      "Job: partial admission annotation",
			input:     k8s.MakeJob("ns", "j").KueueQueue("q").Parallelism(8).Annotate(AnnotationJobMinParallelism, "2").Limit("nvidia.com/gpu", "1").YAML(),
			wantOwner: "Job", wantSets: "main:8/2:nvidia.com/gpu=1", wantGang: 2,
		},
		{
			name: "JobSet: one pod set per replicated job, replicas x parallelism",
			input: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicatedJobs:
  - name: driver
    template: {spec: {template: {spec: {containers: [{name: d, image: x, resources: {requests: {cpu: "1"}}}]}}}}
  - name: workers
    replicas: 3
    template:
      spec:
        parallelism: 2
        template: {spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]}}
`,
			wantOwner: "JobSet", wantSets: "driver:1/0:cpu=1 workers:6/0:nvidia.com/gpu=4", wantGang: 7,
		},
		{
			name: "PyTorchJob: master then workers, schedulingPolicy.minAvailable is the gang",
			input: `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: low}}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 3}}
  pytorchReplicaSpecs:
    Worker:
      replicas: 3
      template: {spec: {containers: [{name: p, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}}
    Master:
      template: {spec: {containers: [{name: p, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}}
`,
			wantOwner: "PyTorchJob", wantSets: "master:1/0:nvidia.com/gpu=8 worker:3/0:nvidia.com/gpu=8", wantGang: 3, wantPriority: 10,
		},
		{
			name: "MPIJob: launcher and workers",
			input: `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {containers: [{name: l, image: x, resources: {requests: {cpu: 500m}}}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}}
`,
			wantOwner: "MPIJob", wantSets: "launcher:1/0:cpu=500m worker:2/0:nvidia.com/gpu=8", wantGang: 3,
		},
		{
			name: "RayCluster: head plus worker groups, minReplicas x numOfHosts in the gang",
			input: `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: h, image: x, resources: {requests: {cpu: "2"}}}]}}
  workerGroupSpecs:
  - groupName: mig
    replicas: 4
    minReplicas: 2
    numOfHosts: 2
    template: {spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/mig-1g.5gb: 1}}}]}}
`,
			wantOwner: "RayCluster", wantSets: "head:1/0:cpu=2 mig:8/4:nvidia.com/mig-1g.5gb=1", wantGang: 5,
		},
		{
			name: "RayJob: the pods of its rayClusterSpec plus the submitter",
			input: `apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  entrypoint: python train.py
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: h, image: x, resources: {requests: {cpu: "1"}}}]}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      template: {spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
  submitterPodTemplate:
    spec: {containers: [{name: s, image: x, resources: {requests: {cpu: 100m}}}]}
`,
			wantOwner: "RayJob", wantSets: "head:1/0:cpu=1 gpu:2/0:nvidia.com/gpu=1 submitter:1/0:cpu=100m", wantGang: 4,
		},
		{
			name: "Pod: init containers and sidecars counted as the scheduler does",
			input: `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {gantry.dev/queue-name: q}}
spec:
  initContainers:
  - {name: big-init, image: x, resources: {requests: {cpu: "6", memory: 1Gi}}}
  - {name: sidecar, image: x, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
  - {name: late-init, image: x, resources: {requests: {cpu: "4"}}}
  containers:
  - {name: a, image: x, resources: {requests: {cpu: "2", memory: 2Gi}}}
  - {name: b, image: x, resources: {requests: {cpu: "1"}, limits: {nvidia.com/gpu: 1}}}
`,
			// cpu: max(2+1+1 sidecar, 6, 4+1) = 6; memory: max(2Gi, 1Gi) = 2Gi.
			wantOwner: "Pod", wantSets: "p:1/0:cpu=6,memory=2Gi,nvidia.com/gpu=1", wantGang: 1,
		},
		{
			name: "Pods grouped by gantry.dev/gang: one pod set per pod",
			input: `apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {gantry.dev/gang: g, gantry.dev/gang-size: "2"}}
spec: {containers: [{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {gantry.dev/gang: g}}
spec: {containers: [{name: a, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]}
`,
			wantOwner: "Gang", wantSets: "p1:1/0:nvidia.com/gpu=1 p2:1/0:nvidia.com/gpu=2", wantGang: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := loadWorkloads(t, tt.input)
			if len(ws) != 1 {
				t.Fatalf("got %d workloads, want 1", len(ws))
			}
			w := ws[0]
			if w.Owner.Kind != tt.wantOwner {
				t.Errorf("owner = %s, want %s", w.Owner.Kind, tt.wantOwner)
			}
			if got := podSetsText(w); got != tt.wantSets {
				t.Errorf("pod sets:\n got %s\nwant %s", got, tt.wantSets)
			}
			if got := w.GangSize(); got != tt.wantGang {
				t.Errorf("gang size = %d, want %d", got, tt.wantGang)
			}
			if w.Priority != tt.wantPriority {
				t.Errorf("priority = %d, want %d", w.Priority, tt.wantPriority)
			}
			if w.Queue != "q" || w.Namespace != "ns" {
				t.Errorf("queue = %s/%s, want ns/q", w.Namespace, w.Queue)
			}
		})
	}
}

func TestWorkloadMetadata(t *testing.T) {
	job := `apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels:
    kueue.x-k8s.io/queue-name: q
    kueue.x-k8s.io/max-exec-time-seconds: "600"
  annotations:
    gantry.dev/submit-at: 1h30m
    gantry.dev/duration: "90"
    gantry.dev/checkpoint-every: 2d
    gantry.dev/min-runtime: 5m
spec:
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-slice-required-topology: topology.gantry.dev/rack
        kueue.x-k8s.io/podset-slice-size: "2"
        kueue.x-k8s.io/podset-preferred-topology: topology.gantry.dev/block
    spec:
      priorityClassName: batch-high
      nodeSelector: {gpu: h100}
      tolerations: [{key: spot, operator: Exists}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
      containers: [{name: c, image: x}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-high}
value: 777
`
	// The Job has no namespace: it lands in "default", which needs a LocalQueue "q".
	w := loadWorkloads(t, docs(k8s.MakeLocalQueue("default", "q", "cq").YAML(), job))[0]
	if w.Namespace != "default" {
		t.Errorf("namespace = %q, want default", w.Namespace)
	}
	wantTiming := api.Timing{SubmitAt: 90 * time.Minute, Duration: 90 * time.Second, CheckpointEvery: 48 * time.Hour}
	if w.Timing != wantTiming || w.MinRuntime != 5*time.Minute || w.MaxRuntime != 10*time.Minute {
		t.Errorf("timing = %+v min %v max %v", w.Timing, w.MinRuntime, w.MaxRuntime)
	}
	if w.PriorityClass != "batch-high" || w.PrioritySource != api.PodPriority || w.Priority != 777 {
		t.Errorf("priority = %s/%s/%d, want PriorityClass batch-high 777", w.PrioritySource, w.PriorityClass, w.Priority)
	}
	ps := w.PodSets[0]
	wantTopo := api.TopologyRequest{Mode: api.TopologyPreferred, Level: "topology.gantry.dev/block", SliceLevel: "topology.gantry.dev/rack", SliceSize: 2}
	if ps.Topology == nil || *ps.Topology != wantTopo {
		t.Errorf("topology = %+v, want %+v", ps.Topology, wantTopo)
	}
	if ps.NodeSelector["gpu"] != "h100" || len(ps.Tolerations) != 1 || ps.Affinity == nil || len(ps.Affinity.NodeSelectorTerms) != 1 {
		t.Errorf("selector/tolerations/affinity not carried: %+v %+v %+v", ps.NodeSelector, ps.Tolerations, ps.Affinity)
	}
}

// A global-default PriorityClass applies to workloads that name no class.
func TestGlobalDefaultPriority(t *testing.T) {
	pc := "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\nvalue: 42\nglobalDefault: true\n"
	w := loadWorkloads(t, docs(pc, k8s.MakeJob("ns", "j").KueueQueue("q").YAML()))[0]
	if w.PriorityClass != "base" || w.Priority != 42 {
		t.Errorf("priority = %s %d, want base 42", w.PriorityClass, w.Priority)
	}
}
