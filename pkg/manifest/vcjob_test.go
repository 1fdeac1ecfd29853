package manifest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
)

// volcanoSetup is the queue setup of workload tests plus the Volcano Queues "default" and
// "research", as a Volcano cluster has them.
func volcanoSetup() string {
	return docs(queueSetup(),
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: default}\nspec: {deserved: {cpu: \"64\", nvidia.com/gpu: 16}}\n",
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: research}\nspec: {weight: 2, deserved: {cpu: \"64\", nvidia.com/gpu: 32}}\n")
}

// taskYAML renders one task of a vcjob: replicas pods of one container asking for res
// ("nvidia.com/gpu: 8"), with extra task fields (indented as task fields) if any.
func taskYAML(name string, replicas int, res, extra string) string {
	return fmt.Sprintf(`  - name: %s
    replicas: %d
%s    template:
      spec:
        containers:
        - name: main
          image: x
          resources: {limits: {%s}}
        restartPolicy: OnFailure
`, name, replicas, extra, res)
}

// vcJobYAML renders a vcjob in namespace ns with spec fields (indented as spec fields)
// followed by the tasks.
func vcJobYAML(name, labels, spec string, tasks ...string) string {
	return fmt.Sprintf("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: %s\n  namespace: ns\n%sspec:\n%s  tasks:\n%s",
		name, labels, spec, strings.Join(tasks, ""))
}

// podYAML is Pod ns/p of one 1-GPU container with the given labels and annotations.
func podYAML(labels, annotations string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: " + labels + ", annotations: " + annotations + "}\n" +
		"spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
}

// queueOf renders where a workload is queued: "q" for a LocalQueue of its namespace, or
// "volcano:q" when q is a Volcano Queue (reached through the LocalQueue Gantry adds).
func queueOf(objs *api.Objects, w api.Workload) string {
	for _, lq := range objs.LocalQueues {
		if lq.Namespace == w.Namespace && lq.Name == w.Queue && lq.Source == w.Source {
			return "volcano:" + w.Queue
		}
	}
	return w.Queue
}

func TestVCJobConversion(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// wantSets is "name:count/minCount:requests" per pod set; wantGang the gang size
		// and wantMember the workload's MinMember (0: the gang is counted per pod set).
		wantSets   string
		wantGang   int32
		wantMember int32
		wantQueue  string
	}{
		{
			name: "MPI job: master and workers, plugins, default queue",
			input: vcJobYAML("mpi", "", "  minAvailable: 3\n  schedulerName: volcano\n  plugins: {ssh: [], svc: []}\n",
				taskYAML("mpimaster", 1, "cpu: 1", "    policies:\n    - {event: TaskCompleted, action: CompleteJob}\n"),
				taskYAML("mpiworker", 2, "nvidia.com/gpu: 8", "")),
			wantSets: "mpimaster:1/0:cpu=1 mpiworker:2/0:nvidia.com/gpu=8", wantGang: 3, wantQueue: "volcano:default",
		},
		{
			name: "TensorFlow ps/worker: restart on eviction, queue research",
			input: vcJobYAML("tf", "", "  minAvailable: 3\n  plugins: {env: [], svc: []}\n  policies:\n  - {event: PodEvicted, action: RestartJob}\n  queue: research\n",
				taskYAML("ps", 1, "cpu: 2", ""),
				taskYAML("worker", 2, "nvidia.com/gpu: 1", "    policies:\n    - {event: TaskCompleted, action: CompleteJob}\n")),
			wantSets: "ps:1/0:cpu=2 worker:2/0:nvidia.com/gpu=1", wantGang: 3, wantQueue: "volcano:research",
		},
		{
			name:     "minAvailable below the replicas: any 3 of the 6 pods (Volcano's job.yaml)",
			input:    vcJobYAML("nginx", "", "  minAvailable: 3\n  maxRetry: 5\n", taskYAML("default-nginx", 6, "cpu: 1", "")),
			wantSets: "default-nginx:6/0:cpu=1", wantGang: 3, wantMember: 3, wantQueue: "volcano:default",
		},
		{
			name: "task minAvailable, job minAvailable defaulted to the sum of the tasks' minimums",
			input: vcJobYAML("elastic", "", "",
				taskYAML("master", 1, "cpu: 1", ""), taskYAML("worker", 4, "nvidia.com/gpu: 2", "    minAvailable: 2\n")),
			wantSets: "master:1/0:cpu=1 worker:4/2:nvidia.com/gpu=2", wantGang: 3, wantQueue: "volcano:default",
		},
		{
			name: "job minAvailable above the tasks' minimums: the extra pods from the tasks in order",
			input: vcJobYAML("elastic", "", "  minAvailable: 4\n",
				taskYAML("master", 1, "cpu: 1", ""), taskYAML("worker", 4, "nvidia.com/gpu: 2", "    minAvailable: 2\n")),
			wantSets: "master:1/0:cpu=1 worker:4/3:nvidia.com/gpu=2", wantGang: 4, wantQueue: "volcano:default",
		},
		{
			name: "a task with minAvailable 0 still gets a pod of the job's minimum",
			input: vcJobYAML("sidecar", "", "  minAvailable: 3\n",
				taskYAML("logger", 2, "cpu: 1", "    minAvailable: 0\n"), taskYAML("worker", 2, "nvidia.com/gpu: 1", "")),
			wantSets: "logger:2/1:cpu=1 worker:2/0:nvidia.com/gpu=1", wantGang: 3, wantQueue: "volcano:default",
		},
		{
			name:     "Kueue queue label routes a vcjob without spec.queue to a LocalQueue",
			input:    vcJobYAML("kq", "  labels: {kueue.x-k8s.io/queue-name: q}\n", "", taskYAML("w", 2, "nvidia.com/gpu: 1", "")),
			wantSets: "w:2/0:nvidia.com/gpu=1", wantGang: 2, wantQueue: "q",
		},
		{
			name:     "Volcano queue label routes a vcjob without spec.queue",
			input:    vcJobYAML("vq", "  labels: {volcano.sh/queue-name: research}\n", "", taskYAML("w", 1, "nvidia.com/gpu: 1", "")),
			wantSets: "w:1/0:nvidia.com/gpu=1", wantGang: 1, wantQueue: "volcano:research",
		},
		{
			name:      "Volcano queue label on a batch/v1 Job",
			input:     k8s.MakeJob("ns", "j").Label(LabelVolcanoQueueName, "research").Parallelism(2).GPUs("1").YAML(),
			wantSets:  "main:2/0:nvidia.com/gpu=1",
			wantGang:  2,
			wantQueue: "volcano:research",
		},
		{
			name:      "Volcano queue annotation on a Pod",
			input:     podYAML("{}", "{scheduling.volcano.sh/queue-name: research}"),
			wantSets:  "p:1/0:nvidia.com/gpu=1",
			wantGang:  1,
			wantQueue: "volcano:research",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(docs(volcanoSetup(), tc.input)))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(objs.Workloads) != 1 {
				t.Fatalf("got %d workloads, want 1", len(objs.Workloads))
			}
			w := objs.Workloads[0]
			if got := podSetsText(w); got != tc.wantSets {
				t.Errorf("pod sets = %s, want %s", got, tc.wantSets)
			}
			if w.GangSize() != tc.wantGang || w.MinMember != tc.wantMember {
				t.Errorf("gang %d (MinMember %d), want %d (MinMember %d)", w.GangSize(), w.MinMember, tc.wantGang, tc.wantMember)
			}
			if got := queueOf(objs, w); got != tc.wantQueue {
				t.Errorf("queue = %s, want %s", got, tc.wantQueue)
			}
		})
	}
}

// TestVCJobFields: the fields beside tasks and gang that change scheduling.
func TestVCJobFields(t *testing.T) {
	in := vcJobYAML("train", "", `  priorityClassName: high
  runningEstimate: 2h
  networkTopology: {highestTierAllowed: 2}
`, taskYAML("", 2, "nvidia.com/gpu: 8", ""), taskYAML("eval", 1, "nvidia.com/gpu: 1", ""))
	pc := "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 500\n"
	objs, err := LoadBytes("in.yaml", []byte(docs(volcanoSetup(), pc, in)))
	if err != nil {
		t.Fatal(err)
	}
	w := objs.Workloads[0]
	if w.Owner.APIVersion != VolcanoJobAPIVersion || w.Owner.Kind != "Job" {
		t.Errorf("owner = %+v", w.Owner)
	}
	if w.PriorityClass != "high" || w.PrioritySource != api.PodPriority || w.Priority != 500 {
		t.Errorf("priority = %s (%s) %d, want PriorityClass high 500", w.PriorityClass, w.PrioritySource, w.Priority)
	}
	if w.Timing.Duration != 2*time.Hour {
		t.Errorf("duration = %s, want runningEstimate 2h", w.Timing.Duration)
	}
	if w.PodSets[0].Name != "default0" || w.PodSets[0].SchedulerName != "volcano" {
		t.Errorf("unnamed task = %q scheduler %q, want default0 and volcano (Volcano's defaults)", w.PodSets[0].Name, w.PodSets[0].SchedulerName)
	}
	for _, ps := range w.PodSets {
		// Volcano's default mode is hard.
		if tr := ps.Topology; tr == nil || tr.Mode != api.TopologyRequired || tr.HighestTierAllowed != 2 {
			t.Errorf("pod set %s topology = %+v, want Required up to tier 2", ps.Name, tr)
		}
	}
}

func TestVCJobErrors(t *testing.T) {
	gpuTask := taskYAML("w", 2, "nvidia.com/gpu: 1", "")
	tests := []struct {
		name  string
		input string
		// wantField and wantMsg: one problem of Job ns/bad names this field and message.
		wantField, wantMsg string
	}{
		{"unknown field", vcJobYAML("bad", "", "", taskYAML("w", 1, "cpu: 1", "    replicaz: 2\n")), "spec.tasks[0].replicaz", `unknown field "replicaz"`},
		{"negative replicas", vcJobYAML("bad", "", "", taskYAML("w", -1, "cpu: 1", "")), "spec.tasks[0].replicas", "-1 is negative"},
		{"job minAvailable above all replicas", vcJobYAML("bad", "", "  minAvailable: 9\n", gpuTask), "spec.minAvailable", "9 is more than the 2 replicas of all tasks"},
		{"task minAvailable above its replicas", vcJobYAML("bad", "", "", taskYAML("w", 2, "cpu: 1", "    minAvailable: 3\n")), "spec.tasks[0].minAvailable", "3 is more than the task's 2 replicas"},
		{"unknown policy action", vcJobYAML("bad", "", "  policies:\n  - {event: PodEvicted, action: Reboot}\n", gpuTask), "spec.policies[0].action", `unknown action "Reboot"`},
		{"Volcano-internal policy event", vcJobYAML("bad", "", "", taskYAML("w", 1, "cpu: 1", "    policies:\n    - {event: OutOfSync, action: RestartJob}\n")), "spec.tasks[0].policies[0].event", `unknown event "OutOfSync"`},
		{"event and exit code", vcJobYAML("bad", "", "  policies:\n  - {event: PodFailed, exitCode: 3, action: RestartJob}\n", gpuTask), "spec.policies[0].exitCode", "not both"},
		{"event twice", vcJobYAML("bad", "", "  policies:\n  - {event: PodFailed, action: RestartJob}\n  - {events: [PodFailed], action: AbortJob}\n", gpuTask), "spec.policies[1].event", "event PodFailed has a policy already"},
		{"unknown plugin", vcJobYAML("bad", "", "  plugins: {sshd: []}\n", gpuTask), "spec.plugins.sshd", `unknown plugin "sshd"`},
		{"mpi plugin without its master task", vcJobYAML("bad", "", "  plugins: {mpi: [\"--master=launcher\"]}\n", gpuTask), "spec.plugins.mpi", `MPI master task "launcher" is not a task`},
		{"task listed twice", vcJobYAML("bad", "", "", gpuTask, gpuTask), "spec.tasks[1].name", `task "w" is listed twice`},
		{"bad task name", vcJobYAML("bad", "", "", taskYAML("Worker_1", 1, "cpu: 1", "")), "spec.tasks[0].name", `"Worker_1" is not a valid task name`},
		{"dependsOn an unknown task", vcJobYAML("bad", "", "", taskYAML("w", 1, "cpu: 1", "    dependsOn: {name: [ps]}\n")), "spec.tasks[0].dependsOn.name[0]", `task "ps" not found`},
		{"dependsOn cycle", vcJobYAML("bad", "", "", taskYAML("a", 1, "cpu: 1", "    dependsOn: {name: [b]}\n"), taskYAML("b", 1, "cpu: 1", "    dependsOn: {name: [a]}\n")), "spec.tasks[0].dependsOn", "cycle: a -> b -> a"},
		{"partitions that do not make the replicas", vcJobYAML("bad", "", "", taskYAML("w", 4, "cpu: 1", "    partitionPolicy: {totalPartitions: 3, partitionSize: 2}\n")), "spec.tasks[0].partitionPolicy", "is not the task's 4 replicas"},
		{"volume without a claim", vcJobYAML("bad", "", "  volumes:\n  - {mountPath: /data}\n", gpuTask), "spec.volumes[0]", "set exactly one of volumeClaimName"},
		{"minSuccess above the replicas", vcJobYAML("bad", "", "  minSuccess: 5\n", gpuTask), "spec.minSuccess", "5 is not between 1 and the 2 replicas"},
		{"negative maxRetry", vcJobYAML("bad", "", "  maxRetry: -1\n", gpuTask), "spec.maxRetry", "-1 is negative"},
		{"no tasks", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: bad, namespace: ns}\nspec: {}\n", "spec.tasks", "at least one task"},
		{"unknown network topology mode", vcJobYAML("bad", "", "  networkTopology: {mode: strict}\n", gpuTask), "spec.networkTopology.mode", `unknown mode "strict"`},
		{"highestTierName without HyperNodes", vcJobYAML("bad", "", "  networkTopology: {mode: hard, highestTierName: rack}\n", gpuTask), "spec.networkTopology.highestTierName", `unknown tier "rack": no HyperNode`},
		{"highestTierAllowed and highestTierName", vcJobYAML("bad", "", "  networkTopology: {highestTierAllowed: 1, highestTierName: rack}\n", gpuTask), "spec.networkTopology.highestTierName", "not both"},
		{"spec.queue and a queue label disagree", vcJobYAML("bad", "  labels: {volcano.sh/queue-name: default}\n", "  queue: research\n", gpuTask), "metadata.labels[volcano.sh/queue-name]", `"default" disagrees with spec.queue "research"`},
		{"spec.queue names no Volcano Queue", vcJobYAML("bad", "", "  queue: nope\n", gpuTask), "spec.queue", `Volcano Queue "nope" not found`},
		{"unknown priority class", vcJobYAML("bad", "", "  priorityClassName: urgent\n", gpuTask), "spec.priorityClassName", `PriorityClass "urgent" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := loadErrors(t, docs(volcanoSetup(), tc.input))
			for _, e := range list {
				if e.Field == tc.wantField && strings.Contains(e.Msg, tc.wantMsg) {
					if e.Source.File != "in.yaml" || e.Source.Line == 0 || e.Kind != "Job" || e.Name != "ns/bad" {
						t.Errorf("problem %q does not name in.yaml:LINE and Job ns/bad", e.Error())
					}
					return
				}
			}
			t.Errorf("no problem at %s with %q; got:\n%v", tc.wantField, tc.wantMsg, list)
		})
	}
}

// TestVolcanoQueueLabels: the Volcano queue label and annotation agree with the Kueue and
// Gantry labels or are errors, on every kind that reads queue labels.
func TestVolcanoQueueLabels(t *testing.T) {
	tests := []struct {
		name, input, wantField, wantMsg string
	}{
		{"Kueue label and Volcano label disagree on a Job",
			k8s.MakeJob("ns", "j").KueueQueue("q").Label(LabelVolcanoQueueName, "research").GPUs("1").YAML(),
			"metadata.labels[volcano.sh/queue-name]", `"research" disagrees with metadata.labels[kueue.x-k8s.io/queue-name] "q"`},
		{"Volcano label and annotation disagree on a Pod",
			podYAML("{volcano.sh/queue-name: default}", "{scheduling.volcano.sh/queue-name: research}"),
			"metadata.annotations[scheduling.volcano.sh/queue-name]", `"research" disagrees with metadata.labels[volcano.sh/queue-name] "default"`},
		{"Volcano label names no queue",
			k8s.MakeJob("ns", "j").Label(LabelVolcanoQueueName, "nope").GPUs("1").YAML(),
			"metadata.labels[volcano.sh/queue-name]", `Volcano Queue "nope" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := loadErrors(t, docs(volcanoSetup(), tc.input))
			for _, e := range list {
				if e.Field == tc.wantField && strings.Contains(e.Msg, tc.wantMsg) && e.Source.File == "in.yaml" && e.Source.Line > 0 {
					return
				}
			}
			t.Errorf("no problem at %s with %q; got:\n%v", tc.wantField, tc.wantMsg, list)
		})
	}
}

// TestPodGroupMinTaskMember: minTaskMember keys name pod sets (the tasks of a job kind)
// and become their minimums; PodGroup networkTopology defaults to hard.
func TestPodGroupMinTaskMember(t *testing.T) {
	pg := func(spec string) string {
		return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\nspec:\n" + spec
	}
	pytorch := `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt, namespace: ns}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        metadata: {annotations: {scheduling.k8s.io/group-name: pg}}
        spec: {containers: [{name: p, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}
    Worker:
      replicas: 4
      template:
        metadata: {annotations: {scheduling.k8s.io/group-name: pg}}
        spec: {containers: [{name: p, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}
`
	objs, err := LoadBytes("in.yaml", []byte(docs(volcanoSetup(), pytorch,
		pg("  minMember: 3\n  queue: research\n  minTaskMember: {master: 1, worker: 2}\n  minResources: {nvidia.com/gpu: 24}\n  networkTopology: {highestTierAllowed: 1}\n"))))
	if err != nil {
		t.Fatal(err)
	}
	w := objs.Workloads[0]
	if got := podSetsText(w); got != "master:1/0:nvidia.com/gpu=8 worker:4/2:nvidia.com/gpu=8" || w.GangSize() != 3 {
		t.Errorf("pod sets %s gang %d, want worker minimum 2 and gang 3", got, w.GangSize())
	}
	if tr := w.PodSets[1].Topology; tr == nil || tr.Mode != api.TopologyRequired {
		t.Errorf("topology = %+v, want Required (Volcano's default mode hard)", tr)
	}

	bad := []struct{ spec, field, msg string }{
		{"  minMember: 3\n  minTaskMember: {launcher: 1}\n", "spec.minTaskMember.launcher", "names no pod set of PyTorchJob ns/pt (its pod sets: master, worker)"},
		{"  minMember: 3\n  minTaskMember: {worker: 5}\n", "spec.minTaskMember.worker", "5 is more than the 4 pods of pod set worker"},
		{"  minTaskMember: {worker: -1}\n", "spec.minTaskMember.worker", "-1 is negative"},
		{"  minResources: {nvidia.com/gpu: 1.5}\n", "spec.minResources[nvidia.com/gpu]", "whole number"},
	}
	for _, b := range bad {
		list := loadErrors(t, docs(volcanoSetup(), pytorch, pg(b.spec)))
		found := false
		for _, e := range list {
			found = found || (e.Kind == "PodGroup" && e.Name == "ns/pg" && e.Field == b.field && strings.Contains(e.Msg, b.msg))
		}
		if !found {
			t.Errorf("%s: no PodGroup ns/pg problem at %s with %q; got:\n%v", b.spec, b.field, b.msg, list)
		}
	}
}
