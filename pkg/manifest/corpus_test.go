package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/upstream"
)

// upstreamCorpus is the samples of the repositories whose job and queue kinds Gantry
// reads, at exact versions served by the Go module proxy: Kueue's kueueviz examples (the
// only user manifests its v0.19.0 module holds), the Kubeflow operators', KubeRay's,
// JobSet's, LeaderWorkerSet's, and Volcano's examples (v1.8.2; the proxy refuses newer
// Volcano versions).
func upstreamCorpus() []upstreamModule {
	return []upstreamModule{
		{repo: "Kueue", path: "sigs.k8s.io/kueue", version: "v0.19.0", dirs: []string{"cmd/kueueviz/examples"},
			setup: []string{"cmd/kueueviz/examples/00-resource-flavor.yaml", "cmd/kueueviz/examples/01-cluster-queues.yaml",
				"cmd/kueueviz/examples/01.5-cohorts.yaml", "cmd/kueueviz/examples/02-local-queues.yaml",
				"cmd/kueueviz/examples/07-workload-priority-classes.yaml"}},
		{repo: "training-operator", path: "github.com/kubeflow/training-operator", version: "v1.8.1", dirs: []string{"examples"},
			// A v1alpha1 leftover: its pod templates carry apiVersion and kind, which
			// PodTemplateSpec does not have (kubectl's strict field validation says so too).
			refused: map[string]string{"examples/xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml": `template.apiVersion: unknown field "apiVersion"`}},
		{repo: "Trainer v2", path: "github.com/kubeflow/trainer/v2", version: "v2.0.0", dirs: []string{"manifests/base/runtimes"}},
		{repo: "MPI operator", path: "github.com/kubeflow/mpi-operator", version: "v0.6.0", dirs: []string{"examples/v2beta1"}},
		// KubeRay's ray-job.use-existing-raycluster.yaml is a RayJob that runs on a
		// RayCluster made elsewhere, no pods of its own: Kueue leaves it alone and Gantry
		// skips it, so it loads with no workload (TestRayJobOnExistingClusterSkipped). Its
		// Volcano samples bring a Queue of a capability only, whose quota is a share of
		// the cluster: they run on our cluster.
		{repo: "KubeRay", path: "github.com/ray-project/kuberay/ray-operator", version: "v1.5.0", dirs: []string{"config/samples"},
			cluster: corpusCluster()},
		{repo: "JobSet", path: "sigs.k8s.io/jobset", version: "v0.10.1", dirs: []string{"config/samples"},
			// The kubebuilder scaffold: an empty spec ("TODO(user): Add fields here").
			refused: map[string]string{"config/samples/batch_v1alpha2_jobset.yaml": "a JobSet needs at least one replicated job"}},
		{repo: "LeaderWorkerSet", path: "sigs.k8s.io/lws", version: "v0.7.0", dirs: []string{"config/samples", "docs/examples"}},
		volcanoCorpus(),
	}
}

// volcanoCorpus is Volcano's examples. Its deployment example's Queue "test" is set up
// for every file, as the example says to create it first, and so are the queues of the
// hierarchical jobs example, which its jobs name. The queues of both have a weight
// only, or a capability only: their quota is a share of the cluster's nodes, so the
// samples run on our cluster (corpusCluster). Volcano v1.8.2 is the newest
// version the module proxy serves.
func volcanoCorpus() upstreamModule {
	const vcjobWebhook = "example/invalid_jobs/"
	return upstreamModule{repo: "Volcano", path: "volcano.sh/volcano", version: "v1.8.2", dirs: []string{"example"},
		setup:   []string{"example/deployment/queue.yaml", "example/hierarchical-jobs/queues.yaml"},
		cluster: corpusCluster(),
		refused: map[string]string{
			// Samples of what Volcano's admission webhook denies, as their names say.
			vcjobWebhook + "duplicatedPolicyEvent-webhook-deny.yaml": "Job default/test-job-webhook-disallow: spec.policies[1].event: event PodFailed has a policy already",
			vcjobWebhook + "duplicatedTaskName-webhook-deny.yaml":    `Job default/test-job-webhook-disallow: spec.tasks[1].name: task "task-1" is listed twice (first at spec.tasks[0])`,
			vcjobWebhook + "minAvailable-webhook-deny.yaml":          "Job default/test-job-webhook-disallow: spec.minAvailable: 5 is more than the 4 replicas of all tasks",
			// A pod spec has priorityClassName, not priorityClass: the API server prunes the
			// field from the Job (kubectl's strict field validation refuses it).
			"example/kubecon-2019-china/task-priority/elastic-job.yaml": `Job elastic-job: spec.tasks[0].template.spec.priorityClass: unknown field "priorityClass"`,
			// PriorityClasses of scheduling.k8s.io/v1beta1, which Kubernetes no longer serves.
			"example/kubecon-2019-china/task-priority/high-priority.yaml":   `PriorityClass high-pri: apiVersion: kind PriorityClass is not read under apiVersion "scheduling.k8s.io/v1beta1"`,
			"example/kubecon-2019-china/task-priority/normal-priority.yaml": `PriorityClass high-pri: apiVersion: kind PriorityClass is not read under apiVersion "scheduling.k8s.io/v1beta1"`,
		},
	}
}

// corpusCluster is the nodes the samples of Volcano queues run on: four nodes of 64
// CPUs, 512Gi and eight H100s each.
func corpusCluster() string {
	return k8s.MakeNodePool("corpus-nodes", 4).GPUs("H100-SXM5-80GB", 8).YAML()
}

// corpusQueues is what a user who runs the samples has in the cluster already: one
// ClusterQueue and, in each namespace the samples use, the LocalQueue "default" that
// Kueue gives jobs without a queue label (LocalQueueDefaulting). A LocalQueue of the name
// a Volcano job gives wins over a Volcano Queue of that name, so in those namespaces it
// also serves Volcano's own queue "default" (elsewhere the loader stands one in,
// TestVolcanoDefaultQueue).
func corpusQueues() string {
	parts := []string{`apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: corpus-flavor}
`, `apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: corpus}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu, google.com/tpu]
    flavors:
    - name: corpus-flavor
      resources:
      - {name: cpu, nominalQuota: 10k}
      - {name: memory, nominalQuota: 100Ti}
      - {name: nvidia.com/gpu, nominalQuota: 1k}
      - {name: google.com/tpu, nominalQuota: 1k}
`}
	for _, ns := range []string{"default", "kubeflow", "lws-system", "alb-test-infra"} {
		parts = append(parts, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: default, namespace: %s}\nspec: {clusterQueue: corpus}\n", ns))
	}
	return docs(parts...)
}

// TestUpstreamSamples loads every sample of the upstream repositories, each file on its
// own with the queue objects it needs, through Load. Each file must load, or fail only
// on kinds Gantry says it does not read.
func TestUpstreamSamples(t *testing.T) {
	queues := filepath.Join(t.TempDir(), "corpus-queues.yaml")
	if err := os.WriteFile(queues, []byte(corpusQueues()), 0o600); err != nil {
		t.Fatal(err)
	}
	var table []string
	total := corpusResult{unsupported: map[string]bool{}}
	for _, m := range upstreamCorpus() {
		root := upstream.ModuleDir(t, m.path, m.version)
		own := []string{queues}
		if m.cluster != "" {
			cluster := filepath.Join(t.TempDir(), "corpus-cluster.yaml")
			if err := os.WriteFile(cluster, []byte(m.cluster), 0o600); err != nil {
				t.Fatal(err)
			}
			own = append(own, cluster)
		}
		r := loadModuleSamples(t, root, m, own)
		table = append(table, fmt.Sprintf("%-18s %-8s %5d %6d %7d %8d %9d  %s", m.repo, m.version, r.files, r.loaded, r.refused, r.declined, r.workloads, r.unsupportedKinds()))
		total.files += r.files
		total.loaded += r.loaded
		total.workloads += r.workloads
	}
	t.Logf("%-18s %-8s %5s %6s %7s %8s %9s  %s\n%s", "repository", "version", "files", "loaded", "refused", "declined", "workloads", "unsupported kinds", strings.Join(table, "\n"))
	// Floors, so that the test cannot pass by loading nothing (a folder moved upstream,
	// every file filtered out).
	if total.files < 178 || total.loaded < 143 || total.workloads < 190 {
		t.Errorf("corpus too small: %d files, %d loaded, %d workloads; want at least 178, 143, 190", total.files, total.loaded, total.workloads)
	}
}

// loadModuleSamples loads each sample file of one module with the module's setup files
// and our own files (the corpus queues, the module's cluster), failing the test on any error that is not an unsupported kind
// in the sample itself (or, for a file refused upstream, the error it must give).
func loadModuleSamples(t *testing.T, root string, m upstreamModule, own []string) corpusResult {
	t.Helper()
	r := corpusResult{unsupported: map[string]bool{}}
	for _, dir := range m.dirs {
		for _, f := range sampleFiles(t, filepath.Join(root, dir)) {
			r.files++
			rel := strings.TrimPrefix(f, root+"/")
			s := loadSample(f, samplePaths(root, m.setup, f, own))
			if want, ok := m.refused[rel]; ok {
				wantError(t, m.repo, f, rel, "refused", want, s.other)
				r.refused++
				continue
			}
			if want, ok := m.declined[rel]; ok {
				wantError(t, m.repo, f, rel, "declined", want, s.other)
				r.declined++
				continue
			}
			if len(s.other) > 0 {
				t.Errorf("%s %s:\n%s", m.repo, rel, strings.Join(s.other, "\n"))
				continue
			}
			for _, k := range s.unsupported {
				r.unsupported[k] = true
			}
			if len(s.unsupported) == 0 {
				r.loaded++
			}
			r.workloads += s.workloads
		}
	}
	return r
}

// wantError checks that a sample refused or declined on purpose fails with the error
// named for it, in the sample's own file (the want text names the object and field).
func wantError(t *testing.T, repo, file, rel, how, want string, got []string) {
	t.Helper()
	for _, e := range got {
		if strings.HasPrefix(e, file+":") && strings.Contains(e, want) {
			return
		}
	}
	t.Errorf("%s %s: want it %s with %q, got errors:\n%s", repo, rel, how, want, strings.Join(got, "\n"))
}

// samplePaths is what one sample is loaded with: our own files, the module's setup
// files other than the sample itself, then the sample.
func samplePaths(root string, setup []string, sample string, own []string) []string {
	paths := append([]string(nil), own...)
	for _, s := range setup {
		if p := filepath.Join(root, s); p != sample {
			paths = append(paths, p)
		}
	}
	return append(paths, sample)
}

// sampleLoad is the outcome of loading one sample.
type sampleLoad struct {
	unsupported []string // kinds the loader does not read, in the sample
	other       []string // every other error
	workloads   int      // workloads read from the sample
}

func loadSample(sample string, paths []string) sampleLoad {
	var s sampleLoad
	objs, err := Load(paths, nil)
	if err != nil {
		list, ok := err.(ErrorList)
		if !ok {
			return sampleLoad{other: []string{err.Error()}}
		}
		for _, e := range list {
			if k := unsupportedKind(e); k != "" && e.Source.File == sample {
				s.unsupported = append(s.unsupported, k)
			} else {
				s.other = append(s.other, e.Error())
			}
		}
	}
	for _, w := range objs.Workloads {
		if w.Source.File == sample {
			s.workloads++
		}
	}
	return s
}

// TestUpstreamTrainerRuntimes: Kubeflow Trainer's own runtimes, each with a TrainJob of
// ours naming it, make the pod sets Trainer's JobSet would have (Trainer v2.0 has no
// TrainJob samples in its repository, only notebooks).
func TestUpstreamTrainerRuntimes(t *testing.T) {
	root := upstream.ModuleDir(t, "github.com/kubeflow/trainer/v2", "v2.0.0")
	dir := t.TempDir()
	queues := filepath.Join(dir, "corpus-queues.yaml")
	if err := os.WriteFile(queues, []byte(corpusQueues()), 0o600); err != nil {
		t.Fatal(err)
	}
	const trainer = "numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 4}}"
	tests := []struct {
		file, runtime, want string
	}{
		{"torch_distributed.yaml", "torch-distributed", "node:3/0:nvidia.com/gpu=4"},
		// MPI-style runtimes run the launcher as a node: it is the trainer job (and takes
		// resourcesPerNode), the node job gets the other numNodes-1 nodes.
		{"mpi_distributed.yaml", "mpi-distributed", "launcher:1/0:nvidia.com/gpu=4 node:2/0:"},
		{"deepspeed_distributed.yaml", "deepspeed-distributed", "launcher:1/0:nvidia.com/gpu=4 node:2/0:"},
		{"mlx_distributed.yaml", "mlx-distributed", "launcher:1/0:nvidia.com/gpu=4 node:2/0:"},
		{"torchtune/llama3_2/llama3_2_1B.yaml", "torchtune-llama3.2-1b", "dataset-initializer:1/0: model-initializer:1/0: node:3/0:nvidia.com/gpu=4"},
		{"torchtune/llama3_2/llama3_2_3B.yaml", "torchtune-llama3.2-3b", "dataset-initializer:1/0: model-initializer:1/0: node:3/0:nvidia.com/gpu=4"},
	}
	for _, tt := range tests {
		t.Run(tt.runtime, func(t *testing.T) {
			job := filepath.Join(dir, tt.runtime+"-trainjob.yaml")
			text := fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n  runtimeRef: {name: %s}\n  trainer: {%s}\n", tt.runtime, trainer)
			if err := os.WriteFile(job, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			objs, err := Load([]string{queues, filepath.Join(root, "manifests/base/runtimes", tt.file), job}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs.Workloads) != 1 {
				t.Fatalf("%d workloads, want the TrainJob's", len(objs.Workloads))
			}
			if got := podSetsText(objs.Workloads[0]); got != tt.want {
				t.Errorf("pod sets %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRayJobOnExistingClusterSkipped: KubeRay's sample of a RayJob that runs on an
// existing RayCluster (spec.clusterSelector, no rayClusterSpec) loads with no workload
// and one skipped line naming it, as Kueue does not queue it.
func TestRayJobOnExistingClusterSkipped(t *testing.T) {
	root := upstream.ModuleDir(t, "github.com/ray-project/kuberay/ray-operator", "v1.5.0")
	sample := filepath.Join(root, "config/samples/ray-job.use-existing-raycluster.yaml")
	queues := filepath.Join(t.TempDir(), "corpus-queues.yaml")
	if err := os.WriteFile(queues, []byte(corpusQueues()), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := Load([]string{queues, sample}, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(objs.Workloads) != 0 {
		t.Errorf("%d workloads, want none", len(objs.Workloads))
	}
	var lines []string
	for _, s := range objs.Skipped {
		if s.Source.File == sample {
			lines = append(lines, s.String())
		}
	}
	want := "RayJob rayjob-use-existing-raycluster: skipped: runs on an existing RayCluster (spec.clusterSelector)"
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("skipped lines of the sample: %q, want one containing %q", lines, want)
	}
}
