package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestReadPhillyJobsErrors(t *testing.T) {
	const header = "timestamp,duration,num_gpus,gpu_time,cluster\n"
	tests := []struct {
		name string
		in   string
		// wantLine/wantCol/wantErr locate and describe the first error.
		wantLine, wantCol int
		wantErr           string
	}{
		{name: "bad timestamp", in: header + "2017-10-09 07:01:55,66.0,1,66.0,a\n2017/10/09,1.0,1,1.0,a\n", wantLine: 3, wantCol: 1, wantErr: "is not a time"},
		{name: "bad duration", in: header + "2017-10-09 07:01:55,abc,1,66.0,a\n", wantLine: 2, wantCol: 21, wantErr: "not a non-negative number of seconds"},
		{name: "zero gpus", in: header + "2017-10-09 07:01:55,1.0,0,66.0,a\n", wantLine: 2, wantCol: 25, wantErr: "out of range"},
		{name: "empty vc", in: header + "2017-10-09 07:01:55,1.0,1,66.0,\n", wantLine: 2, wantCol: 32, wantErr: "empty virtual cluster"},
		{name: "missing column", in: "timestamp,duration,num_gpus,gpu_time\n2017-10-09 07:01:55,1.0,1,66.0\n", wantLine: 1, wantCol: 1, wantErr: `"cluster": required column missing`},
		{name: "negative duration", in: header + "2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09 07:01:56,-5.0,1,66.0,a\n", wantLine: 3, wantCol: 21, wantErr: `"-5.0" is negative`},
		{name: "negative fraction", in: header + "2017-10-09 07:01:55,-0.5,1,66.0,a\n", wantLine: 2, wantCol: 21, wantErr: "is negative"},
		{name: "short row", in: header + "2017-10-09 07:01:55,1.0\n", wantLine: 2, wantCol: 1, wantErr: `"num_gpus": "" is not a whole number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPhillyJobs(strings.NewReader(tc.in), "philly.csv")
			wantTraceError(t, err, tc.wantLine, tc.wantCol, tc.wantErr)
		})
	}
}

func TestImportPhilly(t *testing.T) {
	jobs, err := ReadPhillyJobs(strings.NewReader(`timestamp,duration,num_gpus,gpu_time,cluster
2017-10-02 00:00:10,100.5,16,1608.0,a
2017-10-01 00:00:00,60.0,1,60.0,b
2017-09-30 23:59:59,60.0,1,60.0,a
2017-10-01 00:01:00,60.0,2,120.0,zz
2017-10-01 00:02:00,0.0,1,0.0,a
2017-10-01 00:03:00,10.0,12,120.0,a
`), "philly.csv")
	if err != nil {
		t.Fatal(err)
	}
	vcs, err := ReadPhillyVCs(strings.NewReader("vc,node num\na,2\nb,1\n"), "vc.csv")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	imp, err := ImportPhilly(jobs, vcs, PhillyOptions{From: from, To: from.AddDate(0, 2, 0), File: "philly.csv", NodePercent: 50})
	if err != nil {
		t.Fatal(err)
	}
	objs := imp.Objects
	// Three jobs survive, ordered by submission: b's 1-GPU job at t=0, a's 12-GPU gang
	// (two pods of 6), then a's 16-GPU gang. At 50% a keeps one of its two nodes and b
	// keeps its one node (at least one).
	if len(objs.Workloads) != 3 {
		t.Fatalf("kept %d workloads, want 3 (skipped %v)", len(objs.Workloads), imp.Skipped)
	}
	first, twelve, gang := objs.Workloads[0], objs.Workloads[1], objs.Workloads[2]
	if twelve.PodSets[0].Count != 2 || twelve.PodSets[0].Requests[resources.NvidiaGPU] != 6 {
		t.Errorf("12-GPU job = %d pods × %v, want 2 × 6 GPUs", twelve.PodSets[0].Count, twelve.PodSets[0].Requests)
	}
	if first.Queue != "b" || first.Timing.SubmitAt != 0 || first.Timing.Duration != time.Minute {
		t.Errorf("first workload queue %q submit %v duration %v", first.Queue, first.Timing.SubmitAt, first.Timing.Duration)
	}
	if gang.PodSets[0].Count != 2 || gang.PodSets[0].Requests[resources.NvidiaGPU] != 8 {
		t.Errorf("16-GPU job = %d pods × %v, want 2 × 8 GPUs", gang.PodSets[0].Count, gang.PodSets[0].Requests)
	}
	if gang.Timing.SubmitAt != 24*time.Hour+10*time.Second || gang.Timing.Duration != 100500*time.Millisecond {
		t.Errorf("gang submit %v duration %v", gang.Timing.SubmitAt, gang.Timing.Duration)
	}
	wantSkipped := map[string]int{SkipOutsideWindow: 1, SkipUnknownVC: 1, SkipZeroDuration: 1}
	for k, v := range wantSkipped {
		if imp.Skipped[k] != v {
			t.Errorf("skipped[%q] = %d, want %d", k, imp.Skipped[k], v)
		}
	}
	if len(objs.ClusterQueues) != 2 || objs.ClusterQueues[0].ResourceGroups[0].Flavors[0].Resources[0].Nominal != 8 {
		t.Errorf("ClusterQueue vc-a quota: %+v", objs.ClusterQueues)
	}
	if objs.ClusterQueues[0].Cohort != PhillyCohort || objs.NodePools[0].Count != 2 {
		t.Errorf("cohort %q nodes %d, want %q and 2", objs.ClusterQueues[0].Cohort, objs.NodePools[0].Count, PhillyCohort)
	}
}

func TestPhillyPodShape(t *testing.T) {
	tests := []struct{ gpus, pods, per int }{
		{1, 1, 1}, {8, 1, 8}, {16, 2, 8}, {128, 16, 8}, {12, 2, 6}, {24, 3, 8}, {11, 11, 1}, {10, 2, 5},
	}
	for _, tc := range tests {
		if pods, per := phillyPodShape(tc.gpus, 8); pods != tc.pods || per != tc.per {
			t.Errorf("%d GPUs = %d pods × %d, want %d × %d", tc.gpus, pods, per, tc.pods, tc.per)
		}
	}
}

func TestImportPhillyUnknownVCsAreCountedByName(t *testing.T) {
	jobs, err := ReadPhillyJobs(strings.NewReader(`timestamp,duration,num_gpus,gpu_time,cluster
2017-10-01 00:00:00,60.0,1,60.0,a
2017-10-01 00:01:00,60.0,1,60.0,zz
2017-10-01 00:02:00,60.0,1,60.0,zz
2017-10-01 00:03:00,60.0,1,60.0,yy
`), "philly.csv")
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ImportPhilly(jobs, []PhillyVC{{Name: "a", Nodes: 1}}, PhillyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Objects.Workloads) != 1 || imp.Skipped[SkipUnknownVC] != 3 || imp.UnknownVCs["zz"] != 2 || imp.UnknownVCs["yy"] != 1 {
		t.Errorf("kept %d, skipped %v, unknown %v: want 1 kept and zz: 2, yy: 1 skipped", len(imp.Objects.Workloads), imp.Skipped, imp.UnknownVCs)
	}
}

func TestImportPhillyNodes(t *testing.T) {
	vcs := []PhillyVC{{Name: "a", Nodes: 64}, {Name: "b", Nodes: 32}, {Name: "c", Nodes: 8}, {Name: "d", Nodes: 0}}
	tests := []struct {
		name    string
		o       PhillyOptions
		want    []int // nodes per VC
		wantErr string
	}{
		{name: "own shares", o: PhillyOptions{}, want: []int{64, 32, 8, 1}},
		{name: "percent", o: PhillyOptions{NodePercent: 25}, want: []int{16, 8, 2, 1}},
		// 20 nodes by share 64:32:8:0 = 12.31, 6.15, 1.54, 0 -> 12, 6, 1, 0, plus the largest
		// remainder (c's .54), then d's node from a.
		{name: "exact count", o: PhillyOptions{Nodes: 20, NodePercent: 25}, want: []int{11, 6, 2, 1}},
		// 27 nodes: 16.6, 8.3, 2.1, 0 -> 16, 8, 2, 0; the leftover node to a (largest
		// remainder), then d's node from a.
		{name: "proportional", o: PhillyOptions{Nodes: 27}, want: []int{16, 8, 2, 1}},
		{name: "one each", o: PhillyOptions{Nodes: 4}, want: []int{1, 1, 1, 1}},
		{name: "fewer nodes than VCs", o: PhillyOptions{Nodes: 3}, wantErr: "fewer than the 4 virtual clusters"},
		{name: "negative percent", o: PhillyOptions{NodePercent: -1}, wantErr: "must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			imp, err := ImportPhilly(nil, vcs, tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for i, cq := range imp.Objects.ClusterQueues {
				got := int(cq.ResourceGroups[0].Flavors[0].Resources[0].Nominal) / 8
				if got != tc.want[i] {
					t.Errorf("%s: %d nodes, want %d", cq.Name, got, tc.want[i])
				}
				total += tc.want[i]
			}
			if imp.Objects.NodePools[0].Count != total {
				t.Errorf("pool of %d nodes, want %d", imp.Objects.NodePools[0].Count, total)
			}
		})
	}
}

func TestImportPhillyRealTrace(t *testing.T) {
	dir := filepath.Join(tracesDir, "philly")
	jf, err := os.Open(filepath.Join(dir, "philly.csv"))
	if err != nil {
		t.Skipf("Philly trace not present at %s: %v", dir, err)
	}
	defer jf.Close()
	vf, err := os.Open(filepath.Join(dir, "philly_vc.csv"))
	if err != nil {
		t.Skipf("Philly VC file not present: %v", err)
	}
	defer vf.Close()
	jobs, err := ReadPhillyJobs(jf, "philly.csv")
	if err != nil {
		t.Fatal(err)
	}
	vcs, err := ReadPhillyVCs(vf, "philly_vc.csv")
	if err != nil {
		t.Fatal(err)
	}
	// The README: 82,247 jobs; 11 virtual clusters.
	if len(jobs) != 82247 || len(vcs) != 11 {
		t.Fatalf("jobs %d vcs %d, want 82247 and 11", len(jobs), len(vcs))
	}
	from := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	imp, err := ImportPhilly(jobs, vcs, PhillyOptions{From: from, To: time.Date(2017, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	total := len(imp.Objects.Workloads)
	for _, n := range imp.Skipped {
		total += n
	}
	if total != len(jobs) || len(imp.Objects.Workloads) == 0 {
		t.Errorf("kept %d + skipped %v != %d jobs", len(imp.Objects.Workloads), imp.Skipped, len(jobs))
	}
}

func TestReadGenericWorkloads(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// check inspects the parsed workloads when wantErr is empty.
		check func(t *testing.T, got []workloadView)
		// wantLine/wantCol/wantErr locate and describe the first error.
		wantLine, wantCol int
		wantErr           string
	}{
		{
			name: "full row and defaults",
			in:   "name,namespace,queue,submit_at,duration,priority,pods,min_pods,cpu,memory,gpu,node_selector\ntrain,ml,team-a,90s,2h,5,4,2,8,64Gi,2,pool=a100;zone=x\nlite,,,0,,,,,,,,\n",
			check: func(t *testing.T, got []workloadView) {
				want := []workloadView{
					{ID: "ml/train", Queue: "team-a", Submit: 90 * time.Second, Duration: 2 * time.Hour, Priority: 5, Pods: 4, Min: 2, Req: "cpu=8,memory=64Gi,nvidia.com/gpu=2", Sel: 2},
					{ID: "default/lite", Queue: "default", Pods: 1, Req: ""},
				}
				if len(got) != len(want) {
					t.Fatalf("got %d workloads, want %d", len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("workload %d = %+v, want %+v", i, got[i], want[i])
					}
				}
			},
		},
		{name: "unknown column", in: "name,submit_at,gpus\n", wantLine: 1, wantCol: 3, wantErr: `"gpus": unknown column`},
		{name: "bad quantity", in: "name,submit_at,memory\na,0,lots\n", wantLine: 2, wantCol: 5, wantErr: "cannot parse quantity"},
		{name: "bad duration", in: "name,submit_at\na,soon\n", wantLine: 2, wantCol: 3, wantErr: "invalid duration"},
		{name: "duplicate", in: "name,submit_at\na,0\na,1\n", wantLine: 3, wantCol: 1, wantErr: "already defined on line 2"},
		{name: "bad selector", in: "name,submit_at,node_selector\na,0,zone\n", wantLine: 2, wantCol: 5, wantErr: "not key=value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadGenericWorkloads(strings.NewReader(tc.in), "jobs.csv")
			if tc.wantErr != "" {
				wantTraceError(t, err, tc.wantLine, tc.wantCol, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var views []workloadView
			for _, w := range got {
				ps := w.PodSets[0]
				views = append(views, workloadView{ID: string(w.ID()), Queue: w.Queue, Submit: w.Timing.SubmitAt, Duration: w.Timing.Duration,
					Priority: w.Priority, Pods: ps.Count, Min: ps.MinCount, Req: ps.Requests.String(), Sel: len(ps.NodeSelector)})
			}
			tc.check(t, views)
		})
	}
}

// workloadView is the comparable part of a workload for table tests.
type workloadView struct {
	ID, Queue        string
	Submit, Duration time.Duration
	Priority         int32
	Pods, Min        int32
	Req              string
	Sel              int
}
