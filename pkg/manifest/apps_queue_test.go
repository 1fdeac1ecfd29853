package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// TestTemplateVolcanoQueue: the pods of a Deployment, ReplicaSet, StatefulSet, Job or
// LeaderWorkerSet go to the Volcano Queue their template's
// scheduling.volcano.sh/queue-name names, as Volcano's PodGroup controller puts them
// there (Volcano's example/deployment).
func TestTemplateVolcanoQueue(t *testing.T) {
	const volcanoQueue = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: test}\nspec: {reclaimable: true, deserved: {cpu: 2}}\n"
	tmpl := func(ann string) string {
		return "{metadata: {annotations: {" + ann + "}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: 300m}}}]}}"
	}
	onTest := tmpl("scheduling.volcano.sh/queue-name: test")
	tests := []struct {
		name, input string
		want        string // each workload as "key queue=name"
	}{
		{
			name:  "Deployment: each pod's workload in the queue",
			input: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {replicas: 2, selector: {}, template: " + onTest + "}\n",
			want:  "ns/d-0 queue=test\nns/d-1 queue=test",
		},
		{
			name:  "ReplicaSet",
			input: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, namespace: ns}\nspec: {selector: {}, template: " + onTest + "}\n",
			want:  "ns/r-0 queue=test",
		},
		{
			name:  "StatefulSet",
			input: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: ns}\nspec: {replicas: 3, selector: {}, template: " + onTest + "}\n",
			want:  "ns/s queue=test",
		},
		{
			name:  "batch Job",
			input: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec: {template: " + onTest + "}\n",
			want:  "ns/j queue=test",
		},
		{
			name:  "LeaderWorkerSet: the leader's template speaks for the group",
			input: "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l, namespace: ns}\nspec: {leaderWorkerTemplate: {size: 2, leaderTemplate: " + onTest + ", workerTemplate: " + tmpl("") + "}}\n",
			want:  "ns/l-0 queue=test",
		},
		{
			name:  "the object's own annotation naming the same queue agrees",
			input: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns, annotations: {scheduling.volcano.sh/queue-name: test}}\nspec: {selector: {}, template: " + onTest + "}\n",
			want:  "ns/d-0 queue=test",
		},
		{
			name:  "no annotation: the namespace's LocalQueue default, as before",
			input: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {selector: {}, template: " + tmpl("") + "}\n" + "---\n" + "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: default, namespace: ns}\nspec: {clusterQueue: cq}\n",
			want:  "ns/d-0 queue=default",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, w := range loadWorkloads(t, docs(volcanoQueue, tt.input)) {
				got = append(got, fmt.Sprintf("%s queue=%s", w.Key(), w.Queue))
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("workloads:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// TestTemplateVolcanoQueueErrors: a template queue that disagrees with the object's, or
// names no queue, is blamed at the template's annotation.
func TestTemplateVolcanoQueueErrors(t *testing.T) {
	const onTest = "{metadata: {annotations: {scheduling.volcano.sh/queue-name: test}}, spec: {containers: [{name: c, image: x}]}}"
	tests := []struct {
		name, input, want string
	}{
		{
			name:  "another queue than the object's label",
			input: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec:\n  selector: {}\n  template: " + onTest + "\n",
			want:  `in.yaml:6: StatefulSet ns/s: spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]: "test" disagrees with metadata.labels[kueue.x-k8s.io/queue-name] "q"`,
		},
		{
			name:  "a queue that is not there",
			input: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template: " + onTest + "\n",
			want:  `in.yaml:5: Job ns/j: spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]: Volcano Queue "test" not found (and no LocalQueue ns/test)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range loadErrors(t, docs(tt.input, queueSetup())) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
