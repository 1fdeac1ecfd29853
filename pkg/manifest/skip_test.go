package manifest

import (
	"strings"
	"testing"
)

const withGenerateName = `apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ray-code, namespace: ns}
data: {a: b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: ns}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: ns
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  template:
    spec:
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1"}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: ns
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  template:
    spec:
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1"}}}
`

// TestGenerateNameAndSkippedKinds: objects with only generateName get a name of the
// prefix and five characters, the same on every load and different per object; kinds
// that do not affect scheduling are recorded as skipped, with where they were read.
func TestGenerateNameAndSkippedKinds(t *testing.T) {
	load := func() []string {
		objs, err := LoadBytes("in.yaml", []byte(withGenerateName))
		if err != nil {
			t.Fatal(err)
		}
		if len(objs.Skipped) != 2 || objs.Skipped[0].String() != "in.yaml:18: ConfigMap ns/ray-code: skipped: does not affect scheduling" ||
			objs.Skipped[1].Kind != "Role" {
			t.Errorf("skipped %v, want the ConfigMap and the Role", objs.Skipped)
		}
		var names []string
		for _, w := range objs.Workloads {
			names = append(names, w.Name)
		}
		return names
	}
	first, again := load(), load()
	if len(first) != 2 || first[0] == first[1] || strings.Join(first, ",") != strings.Join(again, ",") {
		t.Fatalf("names %v then %v; want two distinct names, the same on every load", first, again)
	}
	for _, n := range first {
		if !strings.HasPrefix(n, "sample-job-") || len(n) != len("sample-job-")+5 {
			t.Errorf("name %q: want sample-job- and five characters", n)
		}
	}
}
