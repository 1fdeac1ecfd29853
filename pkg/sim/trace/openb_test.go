package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// tracesDir is the shared sample data (see /work/shared/traces/README.md).
const tracesDir = "../../../../shared/traces"

// wantTraceError checks that err is a TraceErrors whose first entry is at line:col and
// mentions substr.
func wantTraceError(t *testing.T, err error, line, col int, substr string) {
	t.Helper()
	var list TraceErrors
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error = %v, want a TraceErrors", err)
	}
	e := list[0]
	if e.Line != line || e.Column != col || !strings.Contains(e.Error(), substr) {
		t.Fatalf("first error = %q (line %d col %d), want line %d col %d containing %q", e.Error(), e.Line, e.Column, line, col, substr)
	}
}

func TestReadOpenBNodes(t *testing.T) {
	const header = "sn,cpu_milli,memory_mib,gpu,model\n"
	tests := []struct {
		name string
		in   string
		// want is the parsed nodes when wantErr is empty.
		want []OpenBNode
		// wantLine, wantCol, wantErr locate and describe the first error.
		wantLine, wantCol int
		wantErr           string
	}{
		{
			name: "gpu and cpu-only nodes",
			in:   header + "n0,64000,262144,2,P100\nn1,96000,786432,0,\n",
			want: []OpenBNode{
				{Name: "n0", CPU: 64000, Memory: 262144 << 20, GPUs: 2, Model: "P100", Line: 2},
				{Name: "n1", CPU: 96000, Memory: 786432 << 20, Line: 3},
			},
		},
		{name: "bad cpu", in: header + "n0,64000,1,2,T4\nn1,lots,1,2,T4\n", wantLine: 3, wantCol: 4, wantErr: `column "cpu_milli": "lots" is not a whole number`},
		{name: "negative gpus", in: header + "n0,1,1,-1,T4\n", wantLine: 2, wantCol: 8, wantErr: "out of range"},
		{name: "gpus without model", in: header + "n0,1,1,4,\n", wantLine: 2, wantCol: 10, wantErr: "no model"},
		{name: "duplicate node", in: header + "n0,1,1,0,\nn0,1,1,0,\n", wantLine: 3, wantCol: 1, wantErr: "already defined on line 2"},
		{name: "missing column", in: "sn,cpu_milli,gpu,model\n", wantLine: 1, wantCol: 1, wantErr: `"memory_mib": required column missing`},
		{name: "empty file", in: "", wantLine: 1, wantCol: 1, wantErr: "empty file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadOpenBNodes(strings.NewReader(tc.in), "nodes.csv")
			if tc.wantErr != "" {
				wantTraceError(t, err, tc.wantLine, tc.wantCol, tc.wantErr)
				if !strings.HasPrefix(err.Error(), "nodes.csv:") {
					t.Fatalf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d nodes, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("node %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestReadOpenBPods(t *testing.T) {
	const header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	tests := []struct {
		name string
		in   string
		// wantGPU is each pod's GPU request in milli; wantFrac whether it shares a GPU.
		wantGPU  []resources.MilliGPU
		wantFrac []bool
		// wantSpec is the first pod's model constraint.
		wantSpec []string
		// wantDuration is the first pod's run time (0 = unknown).
		wantDuration time.Duration
		wantErr      string
		wantLine     int
		wantCol      int
	}{
		{
			name:         "fraction whole cpu-only",
			in:           header + "p0,6000,12288,1,460,V100M32|V100M16|V100M32,LS,Running,10,110,20\np1,1,1,8,1000,,BE,Running,0,5,0\np2,1,1,0,0,,BE,Pending,7,,\n",
			wantGPU:      []resources.MilliGPU{460, 8000, 0},
			wantFrac:     []bool{true, false, false},
			wantSpec:     []string{"V100M16", "V100M32"},
			wantDuration: 90 * time.Second,
		},
		{
			name:     "multigpu variant has five columns",
			in:       "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1000\n",
			wantGPU:  []resources.MilliGPU{1000},
			wantFrac: []bool{false},
		},
		{name: "gpu_milli above one gpu", in: header + "p0,1,1,1,1500,,LS,Running,0,1,0\n", wantErr: "out of range", wantLine: 2, wantCol: 10},
		{name: "share of several gpus", in: header + "p0,1,1,2,500,,LS,Running,0,1,0\n", wantErr: "must be 1000", wantLine: 2, wantCol: 10},
		{name: "deleted before scheduled", in: header + "p0,1,1,1,1000,,LS,Running,0,1,5\n", wantErr: "before it is scheduled", wantLine: 2, wantCol: 29},
		{name: "bad time", in: header + "p0,1,1,1,1000,,LS,Running,x,1,0\n", wantErr: `"creation_time"`, wantLine: 2, wantCol: 27},
		{name: "negative cpu", in: header + "p0,-1,1,1,1000,,LS,Running,0,1,0\n", wantErr: "out of range", wantLine: 2, wantCol: 4},
		{name: "negative gpu count", in: header + "p0,1,1,-1,1000,,LS,Running,0,1,0\n", wantErr: "out of range", wantLine: 2, wantCol: 8},
		{name: "share without a gpu count", in: header + "p0,1,1,0,500,,LS,Running,0,1,0\n", wantErr: "with num_gpu 0", wantLine: 2, wantCol: 10},
		{name: "models without a gpu", in: header + "p0,1,1,0,0,T4,LS,Running,0,1,0\n", wantErr: "asks for no GPU", wantLine: 2, wantCol: 12},
		{name: "missing column", in: "name,cpu_milli,memory_mib,gpu_milli\np0,1,1,1000\n", wantErr: `"num_gpu": required column missing`, wantLine: 1, wantCol: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadOpenBPods(strings.NewReader(tc.in), "pods.csv")
			if tc.wantErr != "" {
				wantTraceError(t, err, tc.wantLine, tc.wantCol, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.wantGPU) {
				t.Fatalf("got %d pods, want %d", len(got), len(tc.wantGPU))
			}
			for i, p := range got {
				if p.GPURequest() != tc.wantGPU[i] || p.Fractional() != tc.wantFrac[i] {
					t.Errorf("pod %d: GPU %d fractional %v, want %d %v", i, p.GPURequest(), p.Fractional(), tc.wantGPU[i], tc.wantFrac[i])
				}
			}
			if strings.Join(got[0].GPUSpec, ",") != strings.Join(tc.wantSpec, ",") {
				t.Errorf("spec = %v, want %v", got[0].GPUSpec, tc.wantSpec)
			}
			if d := OpenBWorkload(got[0], "pods.csv").Timing.Duration; d != tc.wantDuration {
				t.Errorf("duration = %v, want %v", d, tc.wantDuration)
			}
		})
	}
}

func TestOpenBWorkloadRequests(t *testing.T) {
	frac := OpenBWorkload(OpenBPod{Name: "f", CPU: 1000, Memory: 1 << 30, NumGPU: 1, GPUMilli: 250, GPUSpec: []string{"T4"}}, "x")
	ps := frac.PodSets[0]
	if ps.Requests[resources.GPUMilli] != 250 || ps.Requests[resources.NvidiaGPU] != 0 {
		t.Errorf("fractional pod requests %v, want gpu-milli 250 and no whole GPU", ps.Requests)
	}
	if ps.Affinity == nil || ps.Affinity.NodeSelectorTerms[0].MatchExpressions[0].Key != LabelTraceGPUModel {
		t.Errorf("fractional pod with gpu_spec has no affinity on %s: %+v", LabelTraceGPUModel, ps.Affinity)
	}
	whole := OpenBWorkload(OpenBPod{Name: "w", NumGPU: 4, GPUMilli: 1000}, "x")
	if got := whole.PodSets[0].Requests[resources.NvidiaGPU]; got != 4 {
		t.Errorf("whole pod nvidia.com/gpu = %d, want 4", got)
	}
	if whole.Queue != OpenBQueue || whole.Namespace != OpenBNamespace || whole.PodSets[0].Affinity != nil {
		t.Errorf("whole pod queue/ns/affinity = %q %q %v", whole.Queue, whole.Namespace, whole.PodSets[0].Affinity)
	}
}

func TestOpenBGPUModelResolves(t *testing.T) {
	for _, code := range []string{"G2", "G3", "T4", "P100", "V100M16", "V100M32", "A10"} {
		got := OpenBGPUModel(code, "fallback")
		if got == "fallback" {
			t.Errorf("openb model %s does not resolve through devices.LookupModel", code)
		}
	}
	if got := OpenBGPUModel("G9", "T4"); got != "T4" {
		t.Errorf("unknown model maps to %q, want the fallback T4", got)
	}
}

func TestImportOpenBRealTrace(t *testing.T) {
	dir := filepath.Join(tracesDir, "alibaba-gpu-v2023", "csv")
	nodesPath, podsPath := filepath.Join(dir, "openb_node_list_gpu_node.csv"), filepath.Join(dir, "openb_pod_list_default.csv")
	nf, err := os.Open(nodesPath)
	if err != nil {
		t.Skipf("openb trace not present at %s: %v", dir, err)
	}
	defer nf.Close()
	pf, err := os.Open(podsPath)
	if err != nil {
		t.Skipf("openb pod list not present: %v", err)
	}
	defer pf.Close()
	objs, err := ImportOpenB(nf, nodesPath, pf, podsPath, OpenBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The README's counts: 1,213 GPU nodes with 6,212 GPUs; 8,152 pods of which 3,078 share a GPU.
	if len(objs.NodePools) != 1213 || ClusterGPUs(objs.NodePools) != 6212*1000 {
		t.Errorf("nodes %d GPUs %d, want 1213 and 6212000", len(objs.NodePools), ClusterGPUs(objs.NodePools))
	}
	frac := 0
	for _, w := range objs.Workloads {
		if w.PodSets[0].Requests[resources.GPUMilli] > 0 {
			frac++
		}
	}
	if len(objs.Workloads) != 8152 || frac != 3078 {
		t.Errorf("workloads %d fractional %d, want 8152 and 3078", len(objs.Workloads), frac)
	}
	for _, p := range objs.NodePools {
		if _, err := devices.LookupModel(p.GPUModel); err != nil {
			t.Fatalf("pool %s: model %q: %v", p.Name, p.GPUModel, err)
		}
	}
}
