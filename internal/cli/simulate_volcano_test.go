package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// volcanoScenario is two 8-GPU nodes, a Volcano Queue and three vcjobs: "train"
// (master + 2 workers of 8 GPUs, minAvailable 3), "too-big" (3 workers of 8 GPUs, all
// needed: more than the cluster) and "elastic" (3 workers of 8 GPUs, minAvailable 2,
// submitted once train is done).
const volcanoScenario = `apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  count: 2
  cpu: "64"
  memory: 512Gi
  gpu: {model: NVIDIA-H100-80GB-HBM3, perNode: 8}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {deserved: {cpu: "128", memory: 1Ti, nvidia.com/gpu: 32}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train, annotations: {gantry.dev/duration: 1h}}
spec:
  minAvailable: 3
  plugins: {ssh: [], svc: []}
  policies:
  - {event: PodEvicted, action: RestartJob}
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
  - name: worker
    replicas: 2
    template:
      spec:
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: too-big, annotations: {gantry.dev/duration: 1h}}
spec:
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: elastic, annotations: {gantry.dev/submit-at: 2h, gantry.dev/duration: 1h}}
spec:
  minAvailable: 2
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
`

// TestSimulateVolcanoJobs: a vcjob goes through `gantry simulate` as a gang in its
// Volcano queue: all its pods are placed in one step, a gang that cannot fit places no
// pod at all, and minAvailable below the replicas starts the job with that many pods.
func TestSimulateVolcanoJobs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "volcano.yaml")
	if err := os.WriteFile(in, []byte(volcanoScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(dir, "events.jsonl")
	if _, errOut, code := runCLI(t, "simulate", "-f", in, "--events", events, "--seed", "1"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	type record struct {
		T            float64 `json:"t"`
		Event        string  `json:"event"`
		Workload     string  `json:"workload"`
		ClusterQueue string  `json:"clusterQueue"`
		Pods         []struct {
			Name string `json:"name"`
			Node string `json:"node"`
		} `json:"pods"`
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	placed := map[string][]record{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Event == "placed" {
			placed[r.Workload] = append(placed[r.Workload], r)
		}
	}
	train := placed["default/train"]
	if len(train) != 1 || train[0].T != 0 || len(train[0].Pods) != 3 || train[0].ClusterQueue != "default" {
		t.Fatalf("train placements = %+v, want all 3 pods at once at 0s in ClusterQueue default", train)
	}
	nodes := map[string]bool{}
	for _, p := range train[0].Pods {
		nodes[p.Node] = true
	}
	if len(nodes) != 2 {
		t.Errorf("train pods on nodes %v, want its two 8-GPU workers on both nodes", nodes)
	}
	if got := placed["default/too-big"]; len(got) != 0 {
		t.Errorf("too-big placed %+v: a gang that does not fit must place no pod", got)
	}
	if e := placed["default/elastic"]; len(e) != 1 || e[0].T != 7200 || len(e[0].Pods) != 2 {
		t.Errorf("elastic placements = %+v, want 2 of its 3 pods (minAvailable 2) at 2h", e)
	}
}
