package controller

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/resources"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kindNamed is the unstructured job kind of that name.
func kindNamed(t *testing.T, kind string) jobKind {
	t.Helper()
	for _, k := range jobKinds() {
		if k.GVK.Kind == kind {
			return k
		}
	}
	t.Fatalf("no job kind %s", kind)
	return jobKind{}
}

// podSetsOf is the pod sets of a Workload, none for nil.
func podSetsOf(wl *v1alpha1.Workload) []v1alpha1.PodSet {
	if wl == nil {
		return nil
	}
	return wl.Spec.PodSets
}

// readerTemplate is a pod template asking for gpus GPUs (as a limit) next to CPU and
// memory requests, with a node selector, a toleration and a topology request, so the
// comparison covers every field a pod set carries.
func readerTemplate(gpus string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{api.AnnotationPreferredTopology: "topology.kubernetes.io/rack"}},
		"spec": map[string]any{
			"nodeSelector": map[string]any{"gpu": "h100"},
			"tolerations":  []any{map[string]any{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}},
			"containers": []any{map[string]any{"name": "main", "image": "train", "resources": map[string]any{
				"requests": map[string]any{"cpu": "2", "memory": "8Gi"},
				"limits":   map[string]any{"nvidia.com/gpu": gpus}}}},
		},
	}
}

// readerObject is a job object in namespace ns queued to LocalQueue q.
func readerObject(apiVersion, kind string, labels map[string]any, spec map[string]any) map[string]any {
	l := map[string]any{api.LabelKueueQueueName: "q"}
	for k, v := range labels {
		l[k] = v
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "j", "namespace": "ns", "labels": l}, "spec": spec}
}

func replicaSpecs(specs ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(specs); i += 2 {
		out[specs[i].(string)] = specs[i+1]
	}
	return out
}

func kubeflowReplica(replicas int64, gpus string) map[string]any {
	return map[string]any{"replicas": replicas, "template": readerTemplate(gpus)}
}

// kubeflowJob is a kubeflow.org/v1 job of the given kind with one replica of each type.
func kubeflowJob(kind, field string, types ...string) map[string]any {
	specs := map[string]any{}
	for _, t := range types {
		specs[t] = kubeflowReplica(1, "1")
	}
	return readerObject("kubeflow.org/v1", kind, nil, map[string]any{field: specs})
}

func rayCluster(workers ...any) map[string]any {
	return map[string]any{"headGroupSpec": map[string]any{"template": readerTemplate("0")}, "workerGroupSpecs": workers}
}

// readerView is what both paths must agree on: the gang and each pod set.
type readerView struct {
	MinMember  int32
	MaxRuntime time.Duration
	Sets       []podSetView
}

type podSetView struct {
	Name         string
	Count, Gang  int32
	Requests     resources.Vector
	ContainerGPU int64
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Affinity     *corev1.NodeSelector
	Topology     *api.TopologyRequest
}

func viewOf(w *api.Workload) readerView {
	v := readerView{MinMember: w.MinMember, MaxRuntime: w.MaxRuntime}
	for _, ps := range w.PodSets {
		v.Sets = append(v.Sets, podSetView{Name: ps.Name, Count: ps.Count, Gang: ps.GangCount(), Requests: ps.Requests,
			ContainerGPU: ps.ContainerGPU, NodeSelector: ps.NodeSelector, Tolerations: ps.Tolerations,
			Affinity: ps.Affinity, Topology: ps.Topology})
	}
	return v
}

// shape renders pod sets as "name:count/gang" for the expectations.
func (v readerView) shape() string {
	parts := make([]string, len(v.Sets))
	for i, s := range v.Sets {
		parts[i] = fmt.Sprintf("%s:%d/%d", s.Name, s.Count, s.Gang)
	}
	return strings.Join(parts, " ")
}

// simulatorPath loads obj with the queue setup the way `gantry simulate` reads files.
func simulatorPath(t *testing.T, obj map[string]any) (*api.Workload, error) {
	t.Helper()
	doc, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	setup := strings.Join([]string{k8s.MakeFlavor("f").YAML(),
		k8s.MakeClusterQueue("cq").Quota("f", "cpu", "512", "memory", "4Ti", "nvidia.com/gpu", "64").YAML(),
		k8s.MakeLocalQueue("ns", "q", "cq").YAML(), string(doc) + "\n"}, "---\n")
	objs, err := manifest.LoadBytes("in.yaml", []byte(setup))
	if err != nil {
		return nil, err
	}
	switch len(objs.Workloads) {
	case 0:
		return nil, nil // skipped, as a kind's object Kueue does not queue
	case 1:
		return &objs.Workloads[0], nil
	}
	t.Fatalf("simulator path: %d workloads, want 1", len(objs.Workloads))
	return nil, nil
}

// controllerPath converts obj as the controller does when it reads it from the API
// server (integers as int64, a Job typed), then reads the Workload object back into
// the engine's model as a pass does.
func controllerPath(t *testing.T, obj map[string]any) (*api.Workload, error) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var wl *v1alpha1.Workload
	if obj["kind"] == "Job" {
		var job batchv1.Job
		if err := json.Unmarshal(raw, &job); err != nil {
			t.Fatal(err)
		}
		wl, err = WorkloadForJob(&job)
	} else {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		k, ok := jobKindOf(u.GetAPIVersion(), u.GetKind())
		if !ok {
			t.Fatalf("no job kind %s %s", u.GetAPIVersion(), u.GetKind())
		}
		wl, err = WorkloadForObject(k, u)
	}
	if err != nil {
		return nil, err
	}
	return ToAPIWorkload(wl, 0)
}

// TestOneReaderPerJobKind feeds the same object to the simulator's loader and to the
// controller: both must make the same gang of the same pod sets (names, counts, gang
// counts, requests, selectors, tolerations, topology), or both refuse it naming the
// same field.
func TestOneReaderPerJobKind(t *testing.T) {
	cases := []struct {
		name string
		obj  map[string]any
		// want is the pod sets as "name:count/gang"; wantMinMember the gang size over
		// all pod sets (0: the sum); wantErr a field both errors must name, or with
		// clusterIgnores the field the file's reader refuses and the cluster's ignores
		// (an object the API server accepted may carry fields of a newer release);
		// unqueued: an object Kueue does not queue, which the loader skips (no
		// workload, no error) and the controller leaves alone (jobKind.Unqueued).
		want           string
		wantMinMember  int32
		wantErr        string
		clusterIgnores bool
		unqueued       bool
	}{
		{name: "Job with partial admission and max runtime",
			obj: func() map[string]any {
				o := readerObject("batch/v1", "Job", map[string]any{api.LabelKueueMaxExecTime: "3600"},
					map[string]any{"parallelism": int64(4), "completions": int64(3), "template": readerTemplate("1")})
				o["metadata"].(map[string]any)["annotations"] = map[string]any{manifest.AnnotationJobMinParallelism: "2"}
				return o
			}(),
			want: "main:3/2"},
		{name: "JobSet", obj: readerObject("jobset.x-k8s.io/v1alpha2", "JobSet", nil, map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "driver", "template": map[string]any{"spec": map[string]any{"template": readerTemplate("0")}}},
			map[string]any{"name": "workers", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{
				"parallelism": int64(4), "completions": int64(4), "template": readerTemplate("2")}}},
		}}), want: "driver:1/1 workers:8/8"},
		{name: "PyTorchJob with minAvailable", obj: readerObject("kubeflow.org/v1", "PyTorchJob", nil, map[string]any{
			"runPolicy":           map[string]any{"schedulingPolicy": map[string]any{"minAvailable": int64(3)}},
			"pytorchReplicaSpecs": replicaSpecs("Master", kubeflowReplica(1, "1"), "Worker", kubeflowReplica(4, "1")),
		}), want: "master:1/1 worker:4/4", wantMinMember: 3},
		{name: "MPIJob", obj: readerObject("kubeflow.org/v2beta1", "MPIJob", nil, map[string]any{
			"mpiReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(2, "8"), "Launcher", kubeflowReplica(1, "0")),
		}), want: "launcher:1/1 worker:2/2"},
		{name: "RayCluster with numOfHosts and minReplicas", obj: readerObject("ray.io/v1", "RayCluster", nil, rayCluster(
			map[string]any{"groupName": "tpu", "replicas": int64(2), "minReplicas": int64(1), "maxReplicas": int64(2),
				"numOfHosts": int64(4), "template": readerTemplate("1")})),
			want: "head:1/1 tpu:8/4"},
		{name: "RayCluster without replicas starts at minReplicas", obj: readerObject("ray.io/v1", "RayCluster", nil, rayCluster(
			map[string]any{"groupName": "gpu", "minReplicas": int64(3), "maxReplicas": int64(6), "template": readerTemplate("2")})),
			want: "head:1/1 gpu:3/3"},
		{name: "RayJob with a submitter pod", obj: readerObject("ray.io/v1", "RayJob", nil, map[string]any{
			"entrypoint": "python train.py", "submitterPodTemplate": readerTemplate("0"),
			"rayClusterSpec": rayCluster(map[string]any{"groupName": "gpu", "replicas": int64(2), "template": readerTemplate("2")}),
		}), want: "head:1/1 gpu:2/2 submitter:1/1"},
		{name: "TFJob with chief, PS, workers and evaluator", obj: readerObject("kubeflow.org/v1", "TFJob", nil, map[string]any{
			"runPolicy": map[string]any{"schedulingPolicy": map[string]any{"minAvailable": int64(5)}},
			"tfReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(4, "1"), "PS", kubeflowReplica(2, "0"),
				"Evaluator", kubeflowReplica(1, "1"), "Chief", kubeflowReplica(1, "1")),
		}), want: "chief:1/1 ps:2/2 worker:4/4 evaluator:1/1", wantMinMember: 5},
		{name: "XGBoostJob", obj: readerObject("kubeflow.org/v1", "XGBoostJob", nil, map[string]any{
			"xgbReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(3, "1"), "Master", kubeflowReplica(1, "1")),
		}), want: "master:1/1 worker:3/3"},
		{name: "PaddleJob", obj: readerObject("kubeflow.org/v1", "PaddleJob", nil, map[string]any{
			"paddleReplicaSpecs": replicaSpecs("Master", kubeflowReplica(1, "0"), "Worker", kubeflowReplica(2, "8")),
		}), want: "master:1/1 worker:2/2"},
		{name: "JAXJob", obj: readerObject("kubeflow.org/v1", "JAXJob", nil, map[string]any{
			"jaxReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(4, "4")),
		}), want: "worker:4/4"},
		{name: "XGBoostJob without its Master", obj: readerObject("kubeflow.org/v1", "XGBoostJob", nil, map[string]any{
			"xgbReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(3, "1")),
		}), wantErr: "spec.xgbReplicaSpecs.Master"},
		{name: "JAXJob with a replica type of another kind", obj: readerObject("kubeflow.org/v1", "JAXJob", nil, map[string]any{
			"jaxReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(4, "4"), "PS", kubeflowReplica(1, "0")),
		}), wantErr: "spec.jaxReplicaSpecs.PS"},
		{name: "TFJob with an unknown field", obj: readerObject("kubeflow.org/v1", "TFJob", nil, map[string]any{
			"tfReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(2, "1")), "elasticPolicy": map[string]any{},
		}), wantErr: "spec.elasticPolicy", clusterIgnores: true, want: "worker:2/2"},
		{name: "unknown replica type", obj: readerObject("kubeflow.org/v1", "PyTorchJob", nil, map[string]any{
			"pytorchReplicaSpecs": replicaSpecs("Master", kubeflowReplica(1, "1"), "Chief", kubeflowReplica(1, "1")),
		}), wantErr: "spec.pytorchReplicaSpecs.Chief"},
		{name: "misspelt field", obj: readerObject("jobset.x-k8s.io/v1alpha2", "JobSet", nil, map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "w", "replica": int64(2), "template": map[string]any{"spec": map[string]any{"template": readerTemplate("1")}}},
		}}), wantErr: "spec.replicatedJobs[0].replica", clusterIgnores: true, want: "w:1/1"},
		{name: "RayJob on an existing cluster", obj: readerObject("ray.io/v1", "RayJob", nil, map[string]any{
			"entrypoint": "python train.py", "clusterSelector": map[string]any{"ray.io/cluster": "shared"},
		}), unqueued: true},
		{name: "RayJob with both a cluster and a selector", obj: readerObject("ray.io/v1", "RayJob", nil, map[string]any{
			"entrypoint": "python train.py", "clusterSelector": map[string]any{"ray.io/cluster": "shared"},
			"rayClusterSpec": rayCluster(map[string]any{"groupName": "gpu", "replicas": int64(2), "template": readerTemplate("2")}),
		}), wantErr: "spec.clusterSelector"},
		{name: "MPIJob of the training-operator (kubeflow.org/v1)", obj: readerObject("kubeflow.org/v1", "MPIJob", nil, map[string]any{
			"mpiReplicaSpecs": replicaSpecs("Worker", kubeflowReplica(2, "8"), "Launcher", kubeflowReplica(1, "0")),
		}), want: "launcher:1/1 worker:2/2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, simErr := simulatorPath(t, tc.obj)
			if tc.unqueued {
				u := &unstructured.Unstructured{Object: tc.obj}
				k, _ := jobKindOf(u.GetAPIVersion(), u.GetKind())
				if sim != nil || simErr != nil {
					t.Errorf("simulator: workload %v, err %v; want it skipped", sim != nil, simErr)
				}
				if k.Unqueued == nil || !k.Unqueued(u) {
					t.Errorf("controller: %s not left alone (jobKind.Unqueued)", u.GetKind())
				}
				return
			}
			ctl, ctlErr := controllerPath(t, tc.obj)
			if tc.clusterIgnores {
				if simErr == nil || !strings.Contains(simErr.Error(), tc.wantErr) {
					t.Errorf("simulator: err = %v, want one naming %s", simErr, tc.wantErr)
				}
				if ctlErr != nil || viewOf(ctl).shape() != tc.want {
					t.Errorf("controller: err = %v, want %s with the unknown field ignored", ctlErr, tc.want)
				}
				return
			}
			if tc.wantErr != "" {
				for path, err := range map[string]error{"simulator": simErr, "controller": ctlErr} {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("%s: err = %v, want one naming %s", path, err, tc.wantErr)
					}
				}
				return
			}
			if simErr != nil || ctlErr != nil {
				t.Fatalf("simulator err = %v, controller err = %v", simErr, ctlErr)
			}
			sv, cv := viewOf(sim), viewOf(ctl)
			if got := sv.shape(); got != tc.want || sv.MinMember != tc.wantMinMember {
				t.Errorf("simulator: %s minMember %d, want %s minMember %d", got, sv.MinMember, tc.want, tc.wantMinMember)
			}
			if !reflect.DeepEqual(sv, cv) {
				t.Errorf("the paths disagree:\nsimulator  %+v\ncontroller %+v", sv, cv)
			}
		})
	}
}

// TestPodSetOfNamesTheReadersPodSets: the pod set each kind's operator-labelled pod is
// matched to is one the shared reader made, so admitted slots find their pods.
func TestPodSetOfNamesTheReadersPodSets(t *testing.T) {
	ray := readerObject("ray.io/v1", "RayJob", nil, map[string]any{"entrypoint": "python train.py",
		"rayClusterSpec": rayCluster(map[string]any{"groupName": "gpu", "replicas": int64(2), "template": readerTemplate("2")})})
	pytorch := readerObject("kubeflow.org/v1", "PyTorchJob", nil, map[string]any{
		"pytorchReplicaSpecs": replicaSpecs("Master", kubeflowReplica(1, "1"), "Worker", kubeflowReplica(2, "1"))})
	tf := kubeflowJob("TFJob", "tfReplicaSpecs", "Chief", "PS", "Worker", "Evaluator")
	cases := []struct {
		name   string
		obj    map[string]any
		labels map[string]string
		want   string
	}{
		{"Ray head by group", ray, map[string]string{"ray.io/group": "headgroup"}, "head"},
		{"Ray head by node type", ray, map[string]string{"ray.io/group": "headgroup", "ray.io/node-type": "head"}, "head"},
		{"Ray worker", ray, map[string]string{"ray.io/group": "gpu", "ray.io/node-type": "worker"}, "gpu"},
		{"Kubeflow master", pytorch, map[string]string{"training.kubeflow.org/replica-type": "master"}, "master"},
		{"Kubeflow worker, capitalised", pytorch, map[string]string{"training.kubeflow.org/replica-type": "Worker"}, "worker"},
		{"TFJob chief", tf, map[string]string{"training.kubeflow.org/replica-type": "chief"}, "chief"},
		{"TFJob parameter server", tf, map[string]string{"training.kubeflow.org/replica-type": "ps"}, "ps"},
		{"TFJob evaluator", tf, map[string]string{"training.kubeflow.org/replica-type": "evaluator"}, "evaluator"},
		{"XGBoostJob master", kubeflowJob("XGBoostJob", "xgbReplicaSpecs", "Master", "Worker"), map[string]string{"training.kubeflow.org/replica-type": "master"}, "master"},
		{"PaddleJob worker", kubeflowJob("PaddleJob", "paddleReplicaSpecs", "Master", "Worker"), map[string]string{"training.kubeflow.org/replica-type": "worker"}, "worker"},
		{"JAXJob worker", kubeflowJob("JAXJob", "jaxReplicaSpecs", "Worker"), map[string]string{"training.kubeflow.org/replica-type": "worker"}, "worker"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tc.obj}
			k := kindNamed(t, u.GetKind())
			wl, err := WorkloadForObject(k, u)
			if err != nil {
				t.Fatal(err)
			}
			got := k.PodSetOf(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}})
			if got != tc.want {
				t.Fatalf("PodSetOf = %q, want %q", got, tc.want)
			}
			var names []string
			for _, ps := range wl.Spec.PodSets {
				names = append(names, ps.Name)
			}
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+got+" ") {
				t.Errorf("pod set %q is not one of the workload's %v", got, names)
			}
		})
	}
}

// TestWorkloadGangSizeRoundTrip: the gang size the reader found travels on the Workload
// object and comes back as the engine's MinMember; a bad one is refused by name.
func TestWorkloadGangSizeRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		ann     map[string]string
		want    int32
		wantErr bool
	}{
		{name: "none", want: 0},
		{name: "three", ann: carriedAnnotations(nil, 3), want: 3},
		{name: "not a number", ann: map[string]string{api.AnnotationGangSize: "all"}, wantErr: true},
		{name: "zero", ann: map[string]string{api.AnnotationGangSize: "0"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl := k8s.MakeWorkload("ns", "w").Obj()
			wl.Annotations = tc.ann
			got, err := ToAPIWorkload(&wl, 0)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), api.AnnotationGangSize) {
					t.Fatalf("err = %v, want one naming %s", err, api.AnnotationGangSize)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.MinMember != tc.want {
				t.Errorf("MinMember = %d, want %d", got.MinMember, tc.want)
			}
		})
	}
}

// TestShippedRoleCoversEveryJobKind: the controller watches every kind of jobKinds once
// its CRD is installed, and lists, reads and patches (suspends) its objects, and reads
// the related objects its conversion needs. A kind the
// shipped role does not allow would leave its informer unsynced on a cluster that has
// the CRD (the training-operator installs all its kinds at once), so every kind in the
// table must be in config/rbac/role.yaml with those verbs.
func TestShippedRoleCoversEveryJobKind(t *testing.T) {
	data, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	allowed := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, k := range jobKinds() {
		resource := strings.ToLower(k.GVK.Kind) + "s"
		for _, verb := range []string{"get", "list", "watch", "patch"} {
			if !allowed(k.GVK.Group, resource, verb) {
				t.Errorf("config/rbac/role.yaml does not allow %s on %s.%s", verb, resource, k.GVK.Group)
			}
		}
		// The objects its conversion reads (a TrainJob's runtimes) are watched too.
		for _, r := range k.Related {
			resource := strings.ToLower(r.Kind) + "s"
			for _, verb := range []string{"get", "list", "watch"} {
				if !allowed(r.Group, resource, verb) {
					t.Errorf("config/rbac/role.yaml does not allow %s on %s.%s (read for %s)", verb, resource, r.Group, k.GVK.Kind)
				}
			}
		}
	}
}
