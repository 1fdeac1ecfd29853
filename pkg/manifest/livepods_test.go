package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// yamlOf renders an object as `kubectl get -o yaml` prints one (status included).
func yamlOf(t *testing.T, kind string, obj any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return "apiVersion: v1\nkind: " + kind + "\n" + string(b)
}

func livePodYAML(t *testing.T, p *k8s.PodWrapper) string { return yamlOf(t, "Pod", p.Obj()) }

func daemonSetPod(name, node string) *k8s.PodWrapper {
	p := k8s.MakePod("kube-system", name).On(node).Phase(corev1.PodRunning).Resource("cpu", "500m").Resource("memory", "1Gi")
	return p
}

func ownedBy(p *corev1.Pod, apiVersion, kind, name string) *corev1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes}}
	return p
}

// liveDump: two nodes, a DaemonSet pod on each, a running queued pod on n0 and a
// pending one.
func liveDump(t *testing.T) string {
	return docs(queueSetup(),
		yamlOf(t, "Node", k8s.MakeNode("n0").H100(8).Obj()),
		yamlOf(t, "Node", k8s.MakeNode("n1").H100(8).Obj()),
		yamlOf(t, "Pod", ownedBy(daemonSetPod("agent-n0", "n0").Obj(), "apps/v1", "DaemonSet", "agent")),
		yamlOf(t, "Pod", ownedBy(daemonSetPod("agent-n1", "n1").Obj(), "apps/v1", "DaemonSet", "agent")),
		livePodYAML(t, k8s.MakePod("ns", "running").Queue("q").GPUs("6").On("n0").Phase(corev1.PodRunning).Annotate(annotationDevices, "GPU-2,GPU-3,GPU-4,GPU-5,GPU-6,GPU-7")),
		livePodYAML(t, k8s.MakePod("ns", "waiting").Queue("q").GPUs("4")))
}

func TestLiveDumpLoads(t *testing.T) {
	objs, err := LoadBytes("dump.yaml", []byte(liveDump(t)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range objs.Workloads {
		ids = append(ids, string(w.ID()))
	}
	if got := strings.Join(ids, ","); got != "ns/running,ns/waiting" {
		t.Fatalf("workloads = %s, want the two queued pods only", got)
	}
	var live []string
	for _, p := range objs.Live.Pods {
		live = append(live, p.Name+"@"+p.Node+">"+string(p.Workload)+"/"+p.PodSet+"["+strings.Join(p.Devices, " ")+"]")
	}
	want := "kube-system/agent-n0@n0>/[],kube-system/agent-n1@n1>/[],ns/running@n0>ns/running/running[GPU-2 GPU-3 GPU-4 GPU-5 GPU-6 GPU-7]"
	if got := strings.Join(live, ","); got != want {
		t.Fatalf("live pods:\n got %s\nwant %s", got, want)
	}
	if cpu := objs.Live.Pods[0].Requests["cpu"]; cpu != 500 {
		t.Fatalf("DaemonSet pod cpu = %d milli, want 500", cpu)
	}
}

func TestLiveDumpSkips(t *testing.T) {
	in := docs(queueSetup(),
		yamlOf(t, "Node", k8s.MakeNode("n0").H100(8).Obj()),
		livePodYAML(t, k8s.MakePod("kube-system", "unbound-system")),
		livePodYAML(t, k8s.MakePod("ns", "done").Queue("q").On("n0").Phase(corev1.PodSucceeded)),
		livePodYAML(t, k8s.MakePod("ns", "crashed").On("n0").Phase(corev1.PodFailed)),
		yamlOf(t, "Pod", ownedBy(k8s.MakePod("ns", "job-pod").Obj(), "batch/v1", "Job", "train")),
		yamlOf(t, "Pod", ownedBy(k8s.MakePod("ns", "rs-pod").On("n0").Phase(corev1.PodRunning).Obj(), "apps/v1", "ReplicaSet", "web")))
	objs, err := LoadBytes("dump.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Workloads) != 0 {
		t.Fatalf("workloads = %v, want none", objs.Workloads)
	}
	if objs.Live.Finished != 2 {
		t.Fatalf("finished = %d, want 2 (one Succeeded, one Failed)", objs.Live.Finished)
	}
	var skipped []string
	for _, s := range objs.Skipped {
		skipped = append(skipped, s.Name+": "+s.Why)
	}
	want := []string{"kube-system/unbound-system: " + whyUnqueuedPod, "ns/job-pod: " + whyJobPod}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Fatalf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	if len(objs.Live.Pods) != 1 || objs.Live.Pods[0].Name != "ns/rs-pod" || objs.Live.Pods[0].Workload != "" {
		t.Fatalf("live = %+v, want the ReplicaSet pod as capacity only", objs.Live.Pods)
	}
}

// A Job whose one pod set's pods are all bound starts where it runs; one with a pod
// missing queues again and its bound pods are left out with a warning; pods of a Job not
// in the input only use capacity.
func TestLiveDumpJobPods(t *testing.T) {
	job := func(name string, pods int32) string {
		return k8s.MakeJob("ns", name).Queue("q").Pods(pods).GPUs("1").YAML()
	}
	jobPod := func(job, name string) string {
		return yamlOf(t, "Pod", ownedBy(k8s.MakePod("ns", name).GPUs("1").On("n0").Phase(corev1.PodRunning).Obj(), "batch/v1", "Job", job))
	}
	in := docs(queueSetup(), yamlOf(t, "Node", k8s.MakeNode("n0").H100(8).Obj()),
		job("whole", 2), jobPod("whole", "whole-b"), jobPod("whole", "whole-a"),
		job("half", 2), jobPod("half", "half-a"),
		jobPod("gone", "gone-a"))
	objs, err := LoadBytes("dump.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, p := range objs.Live.Pods {
		live = append(live, p.Name+">"+string(p.Workload)+"/"+p.PodSet+"/"+string(rune('0'+p.Index)))
	}
	want := "ns/whole-b>ns/whole/main/1,ns/whole-a>ns/whole/main/0,ns/gone-a>//0"
	if got := strings.Join(live, ","); got != want {
		t.Fatalf("live:\n got %s\nwant %s", got, want)
	}
	if len(objs.Skipped) != 1 || objs.Skipped[0].Name != "ns/half-a" || !strings.Contains(objs.Skipped[0].Why, "Job half is queued again") {
		t.Fatalf("skipped = %+v, want half-a with its Job queued again", objs.Skipped)
	}
}

func TestLiveDumpErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unknown node", docs(queueSetup(),
			livePodYAML(t, daemonSetPod("agent-x", "gone-node"))),
			`Pod kube-system/agent-x: spec.nodeName: bound to node "gone-node", which is not in the input`},
		{"gang half bound", docs(queueSetup(), yamlOf(t, "Node", k8s.MakeNode("n0").H100(8).Obj()),
			livePodYAML(t, k8s.MakePod("ns", "g-0").Queue("q").Gang("g", "2").GPUs("1").On("n0").Phase(corev1.PodRunning)),
			livePodYAML(t, k8s.MakePod("ns", "g-1").Queue("q").Gang("g", "2").GPUs("1"))),
			"1 of the 2 pods of workload ns/g are bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBytes("dump.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// The pods of a Deployment in the dump belong to it through their ReplicaSet: they are
// not counted as capacity beside the Deployment's own workloads (which queue again from
// t=0, as for any job not read as running), so nothing is booked twice.
func TestLiveDumpDeploymentPodsNotTwice(t *testing.T) {
	deployment := `apiVersion: apps/v1
kind: Deployment
metadata: {namespace: ns, name: web, labels: {gantry.dev/queue-name: q}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
`
	rsPod := func(name string) string {
		p := k8s.MakePod("ns", name).Label("pod-template-hash", "5d8f9").GPUs("1").On("n0").Phase(corev1.PodRunning).Obj()
		return yamlOf(t, "Pod", ownedBy(p, "apps/v1", "ReplicaSet", "web-5d8f9"))
	}
	in := docs(queueSetup(), yamlOf(t, "Node", k8s.MakeNode("n0").H100(8).Obj()), deployment, rsPod("web-5d8f9-a"), rsPod("web-5d8f9-b"))
	objs, err := LoadBytes("dump.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Live.Pods) != 0 {
		t.Fatalf("live pods %+v, want none: the Deployment's pods are its workloads', not extra capacity", objs.Live.Pods)
	}
	if len(objs.Workloads) != 2 || len(objs.Skipped) != 2 {
		t.Fatalf("%d workloads, skipped %+v; want the Deployment's 2 workloads and its 2 pods skipped with a warning", len(objs.Workloads), objs.Skipped)
	}
}
