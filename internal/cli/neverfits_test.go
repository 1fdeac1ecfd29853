package cli

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// neverFitQueues is one flavor "gpu" on pool label p=gpu covering cpu, memory and the
// GPU resources the cases ask for, with ample quota, so only node shapes can refuse.
func neverFitQueues() []string {
	return []string{
		k8s.MakeFlavor("gpu").Label("p", "gpu").YAML(),
		k8s.MakeClusterQueue("cq").Quota("gpu", "cpu", "10000", "memory", "100Ti", "nvidia.com/gpu", "1000", "nvidia.com/mig-1g.5gb", "1000").YAML(),
		k8s.MakeLocalQueue("ns", "q", "cq").YAML(),
	}
}

func loadNeverFits(t *testing.T, parts ...string) []NeverFit {
	t.Helper()
	objs, err := manifest.LoadBytes("in.yaml", []byte(strings.Join(parts, "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := NeverFits(objs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestNeverFits(t *testing.T) {
	h100 := k8s.MakeNodePool("h100", 2).GPUs("H100-SXM5-80GB", 8).Label("p", "gpu").YAML()
	tests := []struct {
		name string
		pool string
		job  *k8s.JobWrapper
		// want is the one finding's rendering; empty means the workload fits.
		want string
	}{
		{
			name: "9 GPUs on 8-GPU nodes",
			pool: h100,
			job:  k8s.MakeJob("ns", "nine").KueueQueue("q").GPUs("9"),
			want: "in.yaml:50: workload ns/nine: pod set main: no node of the cluster can hold one pod (0 of 2 nodes); " +
				"closest: node h100-0 (pool h100, 8 x H100-SXM5-80GB exclusive, cpu 64, memory 512Gi) " +
				"(Devices nvidia.com/gpu: need 9, free: 8 whole GPUs, 0 MIG instances, 0 replicas (8 GPUs healthy of 8))",
		},
		{
			name: "32-GPU gang on a 16-GPU cluster",
			pool: h100,
			job:  k8s.MakeJob("ns", "gang").KueueQueue("q").Pods(4).GPUs("8"),
			// No closest node: each node holds a pod; the gang is what is too large.
			want: "in.yaml:50: workload ns/gang: pod set main: the gang needs 4 pods at once, the empty cluster holds 2; " +
				"needs 32 nvidia.com/gpu in all, the cluster has 16",
		},
		{
			name: "mig-1g.5gb on an H100-only cluster",
			pool: h100,
			job:  k8s.MakeJob("ns", "mig").KueueQueue("q").Limit("nvidia.com/mig-1g.5gb", "1"),
			want: "in.yaml:50: workload ns/mig: pod set main: no node of the cluster can hold one pod (0 of 2 nodes); " +
				"needs 1 nvidia.com/mig-1g.5gb in all, the cluster has 0; " +
				"closest: node h100-0 (pool h100, 8 x H100-SXM5-80GB exclusive, cpu 64, memory 512Gi) " +
				"(Devices nvidia.com/mig-1g.5gb: need 1, 0 free (0 on the node))",
		},
		{
			name: "more CPU than any node has",
			pool: h100,
			job:  k8s.MakeJob("ns", "cpu").KueueQueue("q").Request("cpu", "65").GPUs("1"),
			want: "in.yaml:50: workload ns/cpu: pod set main: no node of the cluster can hold one pod (0 of 2 nodes); " +
				"closest: node h100-0 (pool h100, 8 x H100-SXM5-80GB exclusive, cpu 64, memory 512Gi) (Insufficient cpu: requests 65, free 64 of 64)",
		},
		{
			name: "a 16-GPU gang on a 16-GPU cluster fits",
			pool: h100,
			job:  k8s.MakeJob("ns", "full").KueueQueue("q").Pods(2).GPUs("8"),
		},
		{
			name: "mig-1g.5gb on A100 MIG nodes fits",
			pool: k8s.MakeNodePool("a100", 1).GPUs("A100-SXM4-40GB", 8).MIG("all-1g.5gb").Label("p", "gpu").YAML(),
			job:  k8s.MakeJob("ns", "mig").KueueQueue("q").Limit("nvidia.com/mig-1g.5gb", "1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadNeverFits(t, append(neverFitQueues(), tt.pool, tt.job.YAML())...)
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("want no finding, got %v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d findings, want 1: %v", len(got), got)
			}
			if line := got[0].String(); line != tt.want {
				t.Errorf("finding\n  %s\nwant\n  %s", line, tt.want)
			}
		})
	}
}

// The shipped examples all run: nothing is reported, every flavor choice considered.
func TestNeverFitsExamplesClean(t *testing.T) {
	objs, err := manifest.Load([]string{"../../examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NeverFits(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("examples reported as never fitting: %v", got)
	}
}

// A workload fits when any flavor of its queue leads to a node that holds it, and never
// fits when the only flavor points at nodes too small, though other nodes would do.
func TestNeverFitsTriesEveryFlavor(t *testing.T) {
	small := k8s.MakeNodePool("small", 1).GPUs("H100-SXM5-80GB", 4).Label("p", "small").YAML()
	big := k8s.MakeNodePool("big", 1).GPUs("H100-SXM5-80GB", 8).Label("p", "big").YAML()
	job := k8s.MakeJob("ns", "j").KueueQueue("q").GPUs("8").YAML()
	queue := func(flavors ...string) string {
		return k8s.MakeClusterQueue("cq").Flavors("nvidia.com/gpu", "8", flavors...).YAML()
	}
	common := []string{small, big, k8s.MakeFlavor("small").Label("p", "small").YAML(),
		k8s.MakeFlavor("big").Label("p", "big").YAML(), k8s.MakeLocalQueue("ns", "q", "cq").YAML(), job}
	if got := loadNeverFits(t, append(common, queue("small", "big"))...); len(got) != 0 {
		t.Errorf("second flavor fits, got %v", got)
	}
	got := loadNeverFits(t, append(common, queue("small"))...)
	// Both nodes fail on one check; the report names the node that only the flavor keeps
	// out, which tells the user what to change.
	want := `closest: node big-0 (pool big, 8 x H100-SXM5-80GB exclusive, cpu 64, memory 512Gi) (FlavorLabels p: flavor needs p="small")`
	if len(got) != 1 || !strings.HasSuffix(got[0].String(), want) {
		t.Errorf("only flavor too small: got %v, want one ending %q", got, want)
	}
}
