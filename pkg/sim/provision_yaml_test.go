package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/manifest"
)

// provisionYAML is Kueue's ProvisioningRequest setup as a user writes it, with an
// autoscaled NodePool behind it.
const provisionYAML = `apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata:
  name: h100
  annotations: {gantry.dev/autoscale-max: "4", gantry.dev/provision-delay: 10m}
spec:
  count: 1
  gpu: {model: NVIDIA-H100-80GB-HBM3, perNode: 8}
  cpu: "64"
  memory: 512Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: prov-config}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  managedResources: [nvidia.com/gpu]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-config}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 32}]}]
  admissionChecksStrategy:
    admissionChecks: [{name: prov}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {gantry.dev/duration: 1h}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
`

// TestProvisioningFromManifests: the files as loaded run the check: two new nodes join
// after the pool's 10m and the Job starts then.
func TestProvisioningFromManifests(t *testing.T) {
	objs, err := manifest.LoadBytes("prov.yaml", []byte(provisionYAML))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(objs, Options{KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	id := string(objs.Workloads[0].ID())
	if got := timesOf(s.Log(), id, EvPlaced); !sameTimes(got, durations(10*time.Minute)) {
		t.Errorf("placed at %v, want [10m0s]", got)
	}
	reasons := strings.Join(checkReasons(s.Log(), id), "\n")
	if !strings.Contains(reasons, "Provisioned: 2 node(s) of pool h100 added") {
		t.Errorf("check records:\n%s\nwant 2 nodes of pool h100 provisioned", reasons)
	}
}
