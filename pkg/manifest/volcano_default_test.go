package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// TestVolcanoDefaultQueue: a Volcano workload in queue "default" loads as on a Volcano
// cluster, whose default queue (weight 1, reclaimable) always exists, unless the inputs
// say otherwise: their own Queue "default", a LocalQueue "default" of the namespace
// (which wins), or a ClusterQueue "default".
func TestVolcanoDefaultQueue(t *testing.T) {
	job := vcJobYAML("j", "", "", taskYAML("w", 2, "nvidia.com/gpu: 1", ""))
	inDefault := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {volcano.sh/queue-name: default}}\n" +
		"spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
	tests := []struct {
		name, input string
		wantQuota   string // volcanoQuotaText of "default"
		wantQueue   string // queueOf the first workload
		wantErr     string
	}{
		{name: "a vcjob without spec.queue: the stand-in holds the whole cluster",
			input: docs(twoNodes(), job), wantQuota: "cq cpu=128 memory=1Ti nvidia.com/gpu=16", wantQueue: "volcano:default"},
		{name: "the stand-in shares the cluster with the other top-level queues",
			input: docs(twoNodes(), vcQueue("research", "weight: 3"), job), wantQuota: "cq cpu=32 memory=256Gi nvidia.com/gpu=4", wantQueue: "volcano:default"},
		{name: "a pod's volcano.sh/queue-name",
			input: docs(twoNodes(), inDefault), wantQuota: "cq cpu=128 memory=1Ti nvidia.com/gpu=16", wantQueue: "volcano:default"},
		{name: "the inputs' own Queue default",
			input: docs(twoNodes(), vcQueue("default", "deserved: {nvidia.com/gpu: 2}"), job), wantQuota: "cq nvidia.com/gpu=2", wantQueue: "volcano:default"},
		{name: "a LocalQueue default of the namespace wins: no stand-in",
			input: docs(twoNodes(), queueSetup(), k8s.MakeLocalQueue("ns", "default", "cq").YAML(), job), wantQuota: "missing", wantQueue: "default"},
		{name: "a ClusterQueue default: no stand-in, and no Volcano Queue of the name",
			input:   docs(twoNodes(), k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("default").Quota("f", "nvidia.com/gpu", "4").YAML(), job),
			wantErr: `in.yaml:36: Job ns/j: spec.queue: Volcano Queue "default" not found (and no LocalQueue ns/default)`},
		{name: "a Kueue queue label is no Volcano routing: no stand-in",
			input:   docs(twoNodes(), strings.Replace(inDefault, "volcano.sh/queue-name", "kueue.x-k8s.io/queue-name", 1)),
			wantErr: `LocalQueue "default" not found in namespace ns`},
		{name: "no nodes: the stand-in's share is an error at the workload",
			input:   job,
			wantErr: `in.yaml:6: Job ns/j: spec.queue: Volcano Queue "default" is not among the inputs, so Gantry stands in Volcano's own default queue (weight 1, reclaimable), whose quota is a share of the cluster by weight, and the inputs have no nodes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := volcanoQuotaText(objs, VolcanoDefaultQueue); got != tt.wantQuota {
				t.Errorf("quota of default: %s, want %s", got, tt.wantQuota)
			}
			if got := queueOf(objs, objs.Workloads[0]); got != tt.wantQueue {
				t.Errorf("queue %s, want %s", got, tt.wantQueue)
			}
		})
	}
}
