package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// TestUpstreamShapes: the shapes of real files that the upstream corpus
// (TestUpstreamSamples) found Gantry refusing wrongly, each in a minimal manifest of our
// own: what it loads as, and what is skipped.
func TestUpstreamShapes(t *testing.T) {
	defaultQueue := k8s.MakeLocalQueue("ns", "default", "cq").YAML()
	const noLabel = "metadata: {name: j, namespace: ns}\n"
	tests := []struct {
		name, input string
		want        string // workloadsText of the input
		wantSkipped string // the skipped objects, one per line
	}{
		{
			name:  "no queue label: the namespace's LocalQueue default, as Kueue's LocalQueueDefaulting",
			input: docs(defaultQueue, "apiVersion: batch/v1\nkind: Job\n"+noLabel+"spec: {parallelism: 2, template: "+container(1)+"}\n"),
			want:  "ns/j owner=Job/j main:2/0:cpu=500m,nvidia.com/gpu=1 gang=2",
		},
		{
			name: "a file mode in YAML 1.1 octal (0644) is a number",
			input: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n" + `spec:
  template:
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
      volumes: [{name: v, configMap: {name: m, defaultMode: 0644}}]
`,
			want: "ns/j owner=Job/j main:1/0:cpu=1 gang=1",
		},
		{
			name: "RayCluster: KubeRay v1.5's Ray labels and logical resources per group",
			input: "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n" + `spec:
  headGroupSpec: {rayStartParams: {}, labels: {zone: a}, resources: {CPU: "0"}, template: ` + container(0) + `}
  workerGroupSpecs:
  - {groupName: w, replicas: 2, labels: {tier: gpu}, resources: {TPU: "4"}, template: ` + container(1) + `}
`,
			want: "ns/r owner=RayCluster/r head:1/0:cpu=500m w:2/0:cpu=500m,nvidia.com/gpu=1 gang=3",
		},
		{
			name: "the Volcano PodGroup a Kubeflow operator makes for the job is the job's own gang",
			input: "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tj, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n" + `spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template: {metadata: {annotations: {scheduling.k8s.io/group-name: tj}}, spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
`,
			want: "ns/tj owner=TFJob/tj worker:2/0:nvidia.com/gpu=1 gang=2",
		},
		{
			name: "training-operator's kubeflow.org/v1 MPIJob: launcher and workers",
			input: "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: m, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n" + `spec:
  slotsPerWorker: 1
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher: {replicas: 1, template: ` + container(0) + `}
    Worker: {replicas: 2, template: ` + container(1) + `}
`,
			want: "ns/m owner=MPIJob/m launcher:1/0:cpu=500m worker:2/0:cpu=500m,nvidia.com/gpu=1 gang=3",
		},
		{
			name:  "Volcano's kubecon examples: a ReplicaSet of its own, each pod a workload as a Deployment's",
			input: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {replicas: 2, selector: {matchLabels: {app: r}}, template: " + container(1) + "}\n",
			want:  "ns/r-0 owner=ReplicaSet/r main:1/0:cpu=500m,nvidia.com/gpu=1 gang=1\nns/r-1 owner=ReplicaSet/r main:1/0:cpu=500m,nvidia.com/gpu=1 gang=1",
		},
		{
			name: "a Deployment's ReplicaSet in a dump is skipped: its pods are the Deployment's",
			input: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: d-5d8f\n  namespace: ns\n" +
				"  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: d, uid: u1, controller: true}]\n" +
				"spec: {replicas: 2, selector: {}, template: " + container(1) + "}\n",
			wantSkipped: "in.yaml:1: ReplicaSet ns/d-5d8f: skipped: its pods are those of its controller, Deployment d",
		},
		{
			name:        "Gateway API routes are skipped",
			input:       "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: ns}\nspec: {}\n",
			wantSkipped: "in.yaml:1: HTTPRoute ns/r: skipped: does not affect scheduling",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(docs(tt.input, queueSetup())))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got := workloadsText(t, tt.input); got != tt.want {
				t.Errorf("workloads:\n%s\nwant:\n%s", got, tt.want)
			}
			var skipped []string
			for _, s := range objs.Skipped {
				skipped = append(skipped, s.String())
			}
			if got := strings.Join(skipped, "\n"); got != tt.wantSkipped {
				t.Errorf("skipped:\n%s\nwant:\n%s", got, tt.wantSkipped)
			}
		})
	}
}

// TestUpstreamShapeErrors: what stays an error next to the shapes above, naming the
// file, line, object and field.
func TestUpstreamShapeErrors(t *testing.T) {
	tests := []struct {
		name, input string
		want        string // the whole error list
	}{
		{
			name:  "no queue label and no LocalQueue default",
			input: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec: {template: " + container(1) + "}\n",
			want: `in.yaml:3: Job ns/j: metadata.labels: no queue: set label kueue.x-k8s.io/queue-name (or gantry.dev/queue-name) ` +
				`to a LocalQueue of namespace ns, or give the namespace a LocalQueue "default"`,
		},
		{
			name:  "a kind of the same name in another group is unsupported, not a version gap",
			input: "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\nspec: {}\n",
			want:  "in.yaml:2: Queue team: kind: unsupported apiVersion/kind scheduling.run.ai/v2 Queue",
		},
		{
			name:  "Volcano's JobFlow is unsupported, saying what to give instead",
			input: "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: flow}\nspec: {jobRetainPolicy: delete, flows: [{name: a}]}\n",
			want: "in.yaml:2: JobFlow flow: kind: unsupported apiVersion/kind flow.volcano.sh/v1alpha1 JobFlow; Volcano's JobFlow runs the vcjobs of its JobTemplates " +
				"one after another, which Gantry does not model: give it the jobs as batch.volcano.sh/v1alpha1 Job",
		},
		{
			name:  "kube-batch's PodGroup (Volcano's spark example) is unsupported, naming Volcano's group",
			input: "apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: 3}\n",
			want: "in.yaml:2: PodGroup pg: kind: unsupported apiVersion/kind scheduling.incubator.k8s.io/v1alpha1 PodGroup; this is kube-batch's group, " +
				"which Volcano replaced with scheduling.volcano.sh/v1beta1 (which keeps the fields of its PodGroup and Queue): change apiVersion",
		},
		{
			name:  "another version of a kind's own group is a version gap",
			input: "apiVersion: kubeflow.org/v2\nkind: MPIJob\nmetadata: {name: m}\nspec: {}\n",
			want:  `in.yaml:1: MPIJob m: apiVersion: kind MPIJob is not read under apiVersion "kubeflow.org/v2"; supported: kubeflow.org/v2beta1, kubeflow.org/v1`,
		},
		{
			name:  "a PriorityClass of a version Kubernetes no longer serves (Volcano's kubecon examples)",
			input: "apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\nmetadata: {name: high-pri}\nvalue: 1000\n",
			want: `in.yaml:1: PriorityClass high-pri: apiVersion: kind PriorityClass is not read under apiVersion "scheduling.k8s.io/v1beta1"; supported: scheduling.k8s.io/v1 ` +
				`(Kubernetes serves no PriorityClass under scheduling.k8s.io/v1beta1 since 1.22; scheduling.k8s.io/v1 has the same fields: change apiVersion)`,
		},
		{
			name:  "RayJob with both clusterSelector and rayClusterSpec",
			input: "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: ns}\nspec:\n  clusterSelector: {a: b}\n  rayClusterSpec: {headGroupSpec: {template: " + container(0) + "}}\n",
			want:  "in.yaml:5: RayJob ns/j: spec.clusterSelector: a RayJob either makes its cluster (rayClusterSpec) or runs on an existing one (clusterSelector), not both",
		},
		{
			name:  "RayJob with neither",
			input: "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: ns}\nspec: {entrypoint: x}\n",
			want:  "in.yaml:4: RayJob ns/j: spec.rayClusterSpec: missing: a RayJob needs rayClusterSpec, or clusterSelector to run on an existing RayCluster",
		},
		{
			name: "a PodGroup of another name than the job's must be given",
			input: "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tj, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n" + `spec:
  tfReplicaSpecs:
    Worker: {template: {metadata: {annotations: {scheduling.k8s.io/group-name: other}}, spec: {containers: [{name: c, image: x}]}}}
`,
			want: `in.yaml:1: TFJob ns/tj: PodGroup "other" (annotation scheduling.k8s.io/group-name) not found in namespace ns`,
		},
		{
			name:  "a Ray group's labels are still read strictly",
			input: "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r, namespace: ns}\nspec: {headGroupSpec: {labels: [a], template: " + container(0) + "}}\n",
			want:  "in.yaml:4: RayCluster ns/r: spec.headGroupSpec.labels: wrong type: expected an object, got a list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := loadErrors(t, docs(tt.input, k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("cq").Quota("f", "nvidia.com/gpu", "8").YAML(),
				k8s.MakeLocalQueue("ns", "q", "cq").YAML()))
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
