package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/upstream"
)

// upstreamCorpus is the samples of the repositories whose job and queue kinds Gantry
// reads, at exact versions served by the Go module proxy. Volcano's repository is not
// a Go module the proxy serves, so its examples are not part of the corpus.
func upstreamCorpus() []upstreamModule {
	return []upstreamModule{
		{repo: "Kueue", path: "sigs.k8s.io/kueue", version: "v0.17.0", dirs: []string{"cmd/kueueviz/examples"},
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
		// skips it, so it loads with no workload (TestRayJobOnExistingClusterSkipped).
		{repo: "KubeRay", path: "github.com/ray-project/kuberay/ray-operator", version: "v1.5.0", dirs: []string{"config/samples"}},
		{repo: "JobSet", path: "sigs.k8s.io/jobset", version: "v0.10.1", dirs: []string{"config/samples"},
			// The kubebuilder scaffold: an empty spec ("TODO(user): Add fields here").
			refused: map[string]string{"config/samples/batch_v1alpha2_jobset.yaml": "a JobSet needs at least one replicated job"}},
		{repo: "LeaderWorkerSet", path: "sigs.k8s.io/lws", version: "v0.7.0", dirs: []string{"config/samples", "docs/examples"}},
	}
}

// corpusQueues is what a user who runs the samples has in the cluster already: one
// ClusterQueue and, in each namespace the samples use, the LocalQueue "default" that
// Kueue gives jobs without a queue label (LocalQueueDefaulting).
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
		r := loadModuleSamples(t, root, m, queues)
		table = append(table, fmt.Sprintf("%-18s %-8s %5d %6d %7d %9d  %s", m.repo, m.version, r.files, r.loaded, r.refused, r.workloads, r.unsupportedKinds()))
		total.files += r.files
		total.loaded += r.loaded
		total.workloads += r.workloads
	}
	t.Logf("%-18s %-8s %5s %6s %7s %9s  %s\n%s", "repository", "version", "files", "loaded", "refused", "workloads", "unsupported kinds", strings.Join(table, "\n"))
	// Floors, so that the test cannot pass by loading nothing (a folder moved upstream,
	// every file filtered out).
	if total.files < 140 || total.loaded < 115 || total.workloads < 120 {
		t.Errorf("corpus too small: %d files, %d loaded, %d workloads; want at least 140, 115, 120", total.files, total.loaded, total.workloads)
	}
}

// loadModuleSamples loads each sample file of one module with the module's setup files
// and the corpus queues, failing the test on any error that is not an unsupported kind
// in the sample itself (or, for a file refused upstream, the error it must give).
func loadModuleSamples(t *testing.T, root string, m upstreamModule, queues string) corpusResult {
	t.Helper()
	r := corpusResult{unsupported: map[string]bool{}}
	for _, dir := range m.dirs {
		for _, f := range sampleFiles(t, filepath.Join(root, dir)) {
			r.files++
			rel := strings.TrimPrefix(f, root+"/")
			s := loadSample(f, samplePaths(root, m.setup, f, queues))
			if want, ok := m.refused[rel]; ok {
				if !strings.Contains(strings.Join(s.other, "\n"), want) {
					t.Errorf("%s %s: want it refused with %q, got errors:\n%s", m.repo, rel, want, strings.Join(s.other, "\n"))
				}
				r.refused++
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

// samplePaths is what one sample is loaded with: the corpus queues, the module's setup
// files other than the sample itself, then the sample.
func samplePaths(root string, setup []string, sample, queues string) []string {
	paths := []string{queues}
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
