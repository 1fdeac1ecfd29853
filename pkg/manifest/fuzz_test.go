package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: no input makes the loader panic, and every problem names the file.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*/*.yaml")
	dra, _ := filepath.Glob("../../examples/dra/*/*.yaml")
	files = append(files, dra...)
	files = append(files, "testdata/nodes-from-kubectl.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"", "---\n---\n", "[]", "null", "42", "{}", "kind: List\napiVersion: v1\nitems: [1, {kind: Pod}]\n",
		"a: &x [*x]\n", "a: &a [*a, *a]\nb: &b [*b]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {cpu: -1}}}]}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 99999999999}\n",
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: a}\nspec: {parentName: a}\n",
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {cohortName: c, cohort: d, admissionChecks: [x], flavorFungibility: {whenCanBorrow: Borrow, preference: 7}}\n",
		"apiVersion: gantry.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\nspec: {count: -1, cpu: x, memory: y, gpu: {model: Z, perNode: 3}}\n",
		"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, labels: {volcano.sh/queue-name: q}}\nspec: {minAvailable: 9, queue: r, policies: [{event: PodEvicted, action: RestartJob}, {exitCode: 0}], plugins: {mpi: [--master], x: []}, networkTopology: {highestTierAllowed: -1}, tasks: [{name: a, replicas: 2147483647, minAvailable: 3, dependsOn: {name: [b]}, partitionPolicy: {totalPartitions: 0}, template: {spec: {containers: [{name: c}]}}}, {name: b, replicas: 2147483647, dependsOn: {name: [a, b]}}]}\n",
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 5, minTaskMember: {main: 9, x.y: -1}, minResources: {cpu: x}, networkTopology: {mode: soft}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {metadata: {annotations: {scheduling.k8s.io/group-name: g}}, spec: {containers: [{name: c}]}}}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": 5}}",
		"<<: {a: 1}\n", "? [a]\n: b\n", "\t\x00\xff",
		// Dynamic Resource Allocation: slices, classes, claims and pods naming them.
		"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, nodeName: n, pool: {name: n, generation: 1, resourceSliceCount: 1}, devices: [{name: gpu-0, attributes: {type: {string: gpu}, index: {int: 0}}}, {name: gpu-0}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, allNodes: true, pool: {name: p}}\n",
		"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: [{cel: {expression: 'device.attributes[\"x\"].y > '}}]}\n",
		"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: nope, count: -3, allocationMode: All}}], constraints: [{matchAttribute: x, requests: [q]}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {resourceClaims: [{name: a, resourceClaimTemplateName: t}, {name: a}, {name: b, resourceClaimName: x, resourceClaimTemplateName: t}], containers: [{name: c, resources: {claims: [{name: z}]}}]}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared}\nspec: {devices: {requests: [{name: r, firstAvailable: [{name: a, deviceClassName: gpu.nvidia.com}, {name: b, deviceClassName: mig.nvidia.com}]}]}}\nstatus: {allocation: {}}\n",
		"apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nresources: {deviceClassMappings: [{name: '', deviceClassNames: []}, {name: 'a/<profile><profile>', deviceClassNames: [x, x]}], transformations: [{input: x}]}\nwebhook: {port: 9443}\n",
		// Kubeflow Trainer: a TrainJob on a runtime whose jobs are odd, one on a missing
		// runtime; a RayJob on an existing cluster; YAML 1.1 octal.
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: r}\nspec: {mlPolicy: {numNodes: 2147483647, mpi: {runLauncherAsNode: true}}, template: {spec: {replicatedJobs: [{name: node, replicas: 2147483647, template: {metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, spec: {parallelism: -1, template: {spec: {containers: [{name: node}]}}}}}, {name: launcher, replicas: -2}]}}}\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\nspec: {runtimeRef: {name: r}, trainer: {numNodes: -1, resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}}\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: k}\nspec: {runtimeRef: {name: nope, kind: TrainingRuntime}}\n",
		"apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec: {clusterSelector: {a: b}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, configMap: {name: m, defaultMode: 0777}}], containers: [{name: c}]}\n",
		// Admission checks: a ProvisioningRequest check with odd retry values, a check of
		// another controller, a ClusterQueue naming checks on flavors it lacks.
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {name: c}\nspec: {provisioningClassName: '', managedResources: [x, x], retryStrategy: {backoffLimitCount: -1, backoffBaseSeconds: 0, backoffMaxSeconds: -5}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: a}\nspec: {controllerName: kueue.x-k8s.io/provisioning-request, parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: c}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: AdmissionCheck\nmetadata: {name: b}\nspec: {controllerName: example.com/other}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {admissionChecksStrategy: {admissionChecks: [{name: a, onFlavors: [nope]}, {name: b}, {name: a}]}}\n",
		// Partial admission: a minimum above the count, and a LeaderWorkerSet of size 0.
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, annotations: {kueue.x-k8s.io/job-min-parallelism: '21'}}\nspec: {parallelism: 20, template: {spec: {containers: [{name: c}]}}}\n---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec: {replicas: -1, leaderWorkerTemplate: {size: 0, workerTemplate: {spec: {containers: [{name: c}]}}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := LoadBytes("fuzz.yaml", data)
		if err == nil {
			return
		}
		list, ok := err.(ErrorList)
		if !ok {
			t.Fatalf("error is %T, want ErrorList", err)
		}
		for _, e := range list {
			if e.Source.File != "fuzz.yaml" {
				t.Fatalf("problem without the file: %v", e)
			}
		}
	})
}
