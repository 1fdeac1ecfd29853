package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// container is a one-container pod template spec asking for gpus GPUs (as a limit).
func container(gpus int) string {
	return fmt.Sprintf("{spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}, limits: {nvidia.com/gpu: %d}}}]}}", gpus)
}

// workloadsText renders workloads as "name owner=Kind/name sets gang=N", and the
// priority when there is one, one workload per line.
func workloadsText(t *testing.T, input string) string {
	t.Helper()
	var lines []string
	for _, w := range loadWorkloads(t, input) {
		line := fmt.Sprintf("%s owner=%s/%s %s gang=%d", w.Key(), w.Owner.Kind, w.Owner.Name, podSetsText(w), w.GangSize())
		if w.PriorityClass != "" {
			line += fmt.Sprintf(" priority=%s/%s=%d", w.PrioritySource, w.PriorityClass, w.Priority)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestMoreJobKindsConversion: the training-operator v1 kinds, LeaderWorkerSet,
// Deployment and StatefulSet become the workloads and gangs Kueue would make of them.
func TestMoreJobKindsConversion(t *testing.T) {
	const meta = "metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n"
	tests := []struct {
		name, input string
		// want is every workload as workloadsText renders it.
		want string
	}{
		{
			name: "TFJob: chief, PS, workers, evaluator in Kueue's order, minAvailable is the gang",
			input: "apiVersion: kubeflow.org/v1\nkind: TFJob\n" + meta + `spec:
  runPolicy: {suspend: true, schedulingPolicy: {minAvailable: 4}}
  enableDynamicWorker: false
  tfReplicaSpecs:
    Evaluator: {replicas: 1, template: ` + container(0) + `}
    Worker: {replicas: 4, template: ` + container(1) + `}
    PS: {replicas: 2, template: ` + container(0) + `}
    Chief: {template: ` + container(1) + `}
`,
			want: "ns/j owner=TFJob/j chief:1/0:cpu=500m,nvidia.com/gpu=1 ps:2/0:cpu=500m worker:4/0:cpu=500m,nvidia.com/gpu=1 evaluator:1/0:cpu=500m gang=4",
		},
		{
			name: "TFJob: Master is Chief's older name",
			input: "apiVersion: kubeflow.org/v1\nkind: TFJob\n" + meta + `spec:
  tfReplicaSpecs:
    Worker: {replicas: 2, template: ` + container(2) + `}
    Master: {replicas: 1, template: ` + container(0) + `}
`,
			want: "ns/j owner=TFJob/j master:1/0:cpu=500m worker:2/0:cpu=500m,nvidia.com/gpu=2 gang=3",
		},
		{
			name: "XGBoostJob: one master, workers",
			input: "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\n" + meta + `spec:
  xgbReplicaSpecs:
    Worker: {replicas: 3, template: ` + container(1) + `}
    Master: {replicas: 1, restartPolicy: Never, template: ` + container(1) + `}
`,
			want: "ns/j owner=XGBoostJob/j master:1/0:cpu=500m,nvidia.com/gpu=1 worker:3/0:cpu=500m,nvidia.com/gpu=1 gang=4",
		},
		{
			name: "PaddleJob: workers only, with an elastic policy",
			input: "apiVersion: kubeflow.org/v1\nkind: PaddleJob\n" + meta + `spec:
  elasticPolicy: {minReplicas: 2, maxReplicas: 4}
  paddleReplicaSpecs:
    Worker: {replicas: 2, template: ` + container(8) + `}
`,
			want: "ns/j owner=PaddleJob/j worker:2/0:cpu=500m,nvidia.com/gpu=8 gang=2",
		},
		{
			name: "JAXJob: workers, priority class from the scheduling policy",
			input: "apiVersion: kubeflow.org/v1\nkind: JAXJob\n" + meta + `spec:
  runPolicy: {schedulingPolicy: {priorityClass: train}}
  jaxReplicaSpecs:
    Worker: {replicas: 2, template: ` + container(4) + `}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: train}
value: 300
`,
			want: "ns/j owner=JAXJob/j worker:2/0:cpu=500m,nvidia.com/gpu=4 gang=2 priority=PriorityClass/train=300",
		},
		{
			name: "LeaderWorkerSet: one gang per group, leader and size-1 workers, each with the set's queue and priority",
			input: "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n" + strings.Replace(meta, "}}", ", kueue.x-k8s.io/priority-class: high}}", 1) + `spec:
  replicas: 2
  startupPolicy: LeaderCreated
  rolloutStrategy: {type: RollingUpdate}
  leaderWorkerTemplate:
    size: 4
    restartPolicy: RecreateGroupOnPodRestart
    leaderTemplate: ` + container(0) + `
    workerTemplate: ` + container(8) + `
`,
			want: "ns/j-0 owner=LeaderWorkerSet/j leader:1/0:cpu=500m worker:3/0:cpu=500m,nvidia.com/gpu=8 gang=4 priority=WorkloadPriorityClass/high=500\n" +
				"ns/j-1 owner=LeaderWorkerSet/j leader:1/0:cpu=500m worker:3/0:cpu=500m,nvidia.com/gpu=8 gang=4 priority=WorkloadPriorityClass/high=500",
		},
		{
			name: "LeaderWorkerSet without a leader template: every pod of the group from the worker template",
			input: "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n" + meta + `spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate: ` + container(8) + `
`,
			want: "ns/j-0 owner=LeaderWorkerSet/j main:2/0:cpu=500m,nvidia.com/gpu=8 gang=2",
		},
		{
			name: "LeaderWorkerSet of size 1: the leader alone",
			input: "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n" + meta + `spec:
  leaderWorkerTemplate:
    leaderTemplate: ` + container(1) + `
    workerTemplate: ` + container(8) + `
`,
			want: "ns/j-0 owner=LeaderWorkerSet/j leader:1/0:cpu=500m,nvidia.com/gpu=1 gang=1",
		},
		{
			name: "Deployment: each replica is a workload of one pod",
			input: "apiVersion: apps/v1\nkind: Deployment\n" + meta + `spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
`,
			want: "ns/j-0 owner=Deployment/j main:1/0:nvidia.com/gpu=1 gang=1\n" +
				"ns/j-1 owner=Deployment/j main:1/0:nvidia.com/gpu=1 gang=1\n" +
				"ns/j-2 owner=Deployment/j main:1/0:nvidia.com/gpu=1 gang=1",
		},
		{
			name: "Deployment scaled to zero: no workload",
			input: "apiVersion: apps/v1\nkind: Deployment\n" + meta + `spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}
`,
			want: "",
		},
		{
			name: "StatefulSet: the whole set is one gang",
			input: "apiVersion: apps/v1\nkind: StatefulSet\n" + meta + `spec:
  replicas: 4
  serviceName: s
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]}}
`,
			want: "ns/j owner=StatefulSet/j main:4/0:nvidia.com/gpu=2 gang=4",
		},
		{
			name: "StatefulSet without replicas: one pod",
			input: "apiVersion: apps/v1\nkind: StatefulSet\n" + meta + `spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: x}]}}
`,
			want: "ns/j owner=StatefulSet/j main:1/0: gang=1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workloadsText(t, tt.input); got != tt.want {
				t.Errorf("workloads:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestMoreJobKindsExpandedWorkloadsShareNothing: the workloads of one LeaderWorkerSet
// are separate values, so changing one group's pod set leaves the others as read.
func TestMoreJobKindsExpandedWorkloadsShareNothing(t *testing.T) {
	in := `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicas: 2
  leaderWorkerTemplate:
    workerTemplate: {spec: {nodeSelector: {gpu: h100}, tolerations: [{key: gpu, operator: Exists}], containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
`
	ws := loadWorkloads(t, in)
	if len(ws) != 2 {
		t.Fatalf("got %d workloads, want 2", len(ws))
	}
	a, b := ws[0].PodSets[0], ws[1].PodSets[0]
	a.Requests["nvidia.com/gpu"] = 99
	a.NodeSelector["gpu"] = "a100"
	a.Tolerations[0].Key = "other"
	if b.Requests["nvidia.com/gpu"] == 99 || b.NodeSelector["gpu"] != "h100" || b.Tolerations[0].Key != "gpu" {
		t.Errorf("groups share pod set state: %+v", b)
	}
}

// TestMoreJobKindsErrors: every problem of the new kinds names the file, line, object
// and field, and all of an object's problems come out together.
func TestMoreJobKindsErrors(t *testing.T) {
	head := func(apiVersion, kind string) string {
		return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n"
	}
	tests := []struct {
		name, input string
		// want is each problem as "line kind name field: message fragment", lines
		// counted in input (the queue setup before it is subtracted).
		want []string
	}{
		{
			name: "TFJob: a replica type TFJob does not have",
			input: head("kubeflow.org/v1", "TFJob") + `spec:
  tfReplicaSpecs:
    Worker: {replicas: 2, template: ` + container(1) + `}
    Launcher: {replicas: 1, template: ` + container(0) + `}
`,
			want: []string{`7 TFJob ns/j spec.tfReplicaSpecs.Launcher: unknown replica type "Launcher": want one of Chief, Master, PS, Worker, Evaluator`},
		},
		{
			name: "TFJob: Chief and Master both",
			input: head("kubeflow.org/v1", "TFJob") + `spec:
  tfReplicaSpecs:
    Chief: {template: ` + container(1) + `}
    Master: {template: ` + container(1) + `}
`,
			want: []string{"5 TFJob ns/j spec.tfReplicaSpecs: a TFJob has at most one Chief or Master, not both"},
		},
		{
			name: "XGBoostJob: no Master",
			input: head("kubeflow.org/v1", "XGBoostJob") + `spec:
  xgbReplicaSpecs:
    Worker: {replicas: 2, template: ` + container(1) + `}
`,
			want: []string{"5 XGBoostJob ns/j spec.xgbReplicaSpecs.Master: missing: an XGBoostJob needs a Master replica"},
		},
		{
			name: "XGBoostJob: two Masters",
			input: head("kubeflow.org/v1", "XGBoostJob") + `spec:
  xgbReplicaSpecs:
    Master:
      replicas: 2
      template: ` + container(1) + `
`,
			want: []string{"7 XGBoostJob ns/j spec.xgbReplicaSpecs.Master.replicas: replicas 2: the Master of an XGBoostJob must have replicas: 1"},
		},
		{
			name: "JAXJob: workers only",
			input: head("kubeflow.org/v1", "JAXJob") + `spec:
  jaxReplicaSpecs:
    Master: {template: ` + container(1) + `}
`,
			want: []string{`6 JAXJob ns/j spec.jaxReplicaSpecs.Master: unknown replica type "Master": want one of Worker`},
		},
		{
			name: "PaddleJob: misspelt field, and a template without containers",
			input: head("kubeflow.org/v1", "PaddleJob") + `spec:
  paddleReplicaSpec: {}
  paddleReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: []}}}
`,
			want: []string{
				`5 PaddleJob ns/j spec.paddleReplicaSpec: unknown field "paddleReplicaSpec"`,
				"7 PaddleJob ns/j spec.paddleReplicaSpecs.Worker.template.spec.containers: a pod needs at least one container",
			},
		},
		{
			name: "LeaderWorkerSet: size 0",
			input: head(LWSAPIVersion, "LeaderWorkerSet") + `spec:
  leaderWorkerTemplate:
    size: 0
    workerTemplate: ` + container(1) + `
`,
			want: []string{"6 LeaderWorkerSet ns/j spec.leaderWorkerTemplate.size: 0: a group needs at least its leader"},
		},
		{
			name: "LeaderWorkerSet: misspelt template field and too many groups",
			input: head(LWSAPIVersion, "LeaderWorkerSet") + `spec:
  replicas: 20000
  leaderWorkerTemplate:
    leader: {}
    workerTemplate: ` + container(1) + `
`,
			want: []string{
				"5 LeaderWorkerSet ns/j spec.replicas: 20000: each replica is a workload of its own",
				`7 LeaderWorkerSet ns/j spec.leaderWorkerTemplate.leader: unknown field "leader"`,
			},
		},
		{
			name: "Deployment: negative replicas",
			input: head("apps/v1", "Deployment") + `spec:
  replicas: -1
  selector: {matchLabels: {app: web}}
  template: {spec: {containers: [{name: c, image: x}]}}
`,
			want: []string{"5 Deployment ns/j spec.replicas: -1 is negative"},
		},
		{
			name: "StatefulSet: no containers",
			input: head("apps/v1", "StatefulSet") + `spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    spec: {containers: []}
`,
			want: []string{"8 StatefulSet ns/j spec.template.spec.containers: a pod needs at least one container"},
		},
		{
			name: "TrainJob: a bad node count and a bad resource",
			input: head(TrainerAPIVersion, "TrainJob") + `spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 0
    resourcesPerNode: {limits: {nvidia.com/gpu: -1}}
`,
			want: []string{
				"8 TrainJob ns/j spec.trainer.numNodes: 0: a TrainJob needs at least one node",
				"9 TrainJob ns/j spec.trainer.resourcesPerNode.limits[nvidia.com/gpu]: quantity -1 is negative",
			},
		},
		{
			name: "TrainJob: a runtime of another kind",
			input: head(TrainerAPIVersion, "TrainJob") + `spec:
  runtimeRef: {name: r, kind: PyTorchJob}
`,
			want: []string{`5 TrainJob ns/j spec.runtimeRef.kind: "PyTorchJob": want ClusterTrainingRuntime or TrainingRuntime`},
		},
		{
			name:  "an apps/v1 kind Gantry does not read",
			input: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n",
			want:  []string{`2 DaemonSet d kind: unknown kind "DaemonSet" for apiVersion apps/v1; supported: Deployment, ReplicaSet, StatefulSet`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantProblems(t, tt.input, tt.want) })
	}
}

// TestMoreKindsObjectPathMatchesFiles: a StatefulSet read from a cluster (decoded JSON,
// as a Kubernetes client delivers it) becomes the workload the file reader makes of the
// same object, so wiring the kind into the controller needs no reader of its own.
func TestMoreKindsObjectPathMatchesFiles(t *testing.T) {
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "labels": map[string]any{"kueue.x-k8s.io/queue-name": "q"}},
		"spec": map[string]any{"replicas": int64(3), "serviceName": "db", "selector": map[string]any{},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x",
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(2)}}}}}}}}
	fromCluster, err := WorkloadOfObject("cluster", obj)
	if err != nil {
		t.Fatal(err)
	}
	file := `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {replicas: 3, serviceName: db, selector: {}, template: {spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]}}}
`
	fromFile := loadWorkloads(t, file)
	if len(fromFile) != 1 {
		t.Fatalf("file: %d workloads, want 1", len(fromFile))
	}
	if got, want := podSetsText(*fromCluster), podSetsText(fromFile[0]); got != want || got != "main:3/0:nvidia.com/gpu=2" {
		t.Errorf("cluster %s, file %s, want both main:3/0:nvidia.com/gpu=2", got, want)
	}
}

// wantProblems loads input after the queue setup and checks its problems, in order, as
// "line Kind name field: message" with lines counted from input's first line: each
// must start with the wanted line.
func wantProblems(t *testing.T, input string, want []string) {
	t.Helper()
	setup := queueSetup() + "---\n"
	offset := strings.Count(setup, "\n")
	var got []string
	for _, e := range loadErrors(t, setup+input) {
		got = append(got, fmt.Sprintf("%d %s %s %s: %s", e.Source.Line-offset, e.Kind, e.Name, e.Field, e.Msg))
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, got[i], w)
		}
	}
}
