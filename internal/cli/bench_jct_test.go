package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gtesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/bench"
)

// benchJCTFiles writes a small Philly trace: vc a has one 8-GPU node, b one; a's three
// 8-GPU jobs contend for a's quota and b's lendable node. A job of an unknown virtual
// cluster is skipped and counted.
func benchJCTFiles(t *testing.T) (dir, jobs, vcs string) {
	dir = t.TempDir()
	jobs = writeTemp(t, dir, "philly.csv", `timestamp,duration,num_gpus,gpu_time,cluster
2017-10-01 00:00:00,3600.0,8,28800.0,a
2017-10-01 00:00:10,3600.0,8,28800.0,a
2017-10-01 00:00:20,3600.0,8,28800.0,a
2017-10-01 00:00:30,60.0,1,60.0,b
2017-10-01 00:00:40,60.0,1,60.0,zz
`)
	vcs = writeTemp(t, dir, "vc.csv", "vc,node num\na,1\nb,1\n")
	return dir, jobs, vcs
}

func TestBenchJCTCommand(t *testing.T) {
	dir, jobs, vcs := benchJCTFiles(t)
	var out, errOut bytes.Buffer
	md := filepath.Join(dir, "jct.md")
	code := Main([]string{"bench", "jct", "--trace", "philly:" + jobs, "--vc", vcs, "--from", "2017-10-01", "--to", "2017-10-01",
		"--eta", "--markdown", md, "--report", filepath.Join(dir, "r.html")}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	rows := gtesting.TableRows(out.String(), "POLICY")
	if len(rows) != len(bench.JCTPolicies()) {
		t.Fatalf("%d policy rows, want %d:\n%s", len(rows), len(bench.JCTPolicies()), out.String())
	}
	// Three 8-GPU jobs on two nodes: one of them must wait under every policy.
	for p, row := range rows {
		if row["JOBS"] != "4" || row["FINISHED"] != "4" || row["P95 WAIT"] == "0s" || row["P99 WAIT"] == "" || row["P50 JCT"] == "" {
			t.Errorf("%s: %v: want 4 jobs finished and a non-zero p95 wait", p, row)
		}
	}
	if !strings.Contains(out.String(), "RUNTIMES") || !strings.Contains(out.String(), bench.ETALearned) {
		t.Errorf("no ETA table:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "1 virtual cluster has no quota in the VC file (zz: 1)") {
		t.Errorf("stderr does not count the skipped job by virtual cluster:\n%s", errOut.String())
	}
	b, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "| gantry-est |") || !strings.Contains(string(b), "| runtimes |") {
		t.Errorf("markdown %v:\n%s", err, b)
	}
	if html, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !strings.Contains(string(html), "chart-wait-cdf") {
		t.Errorf("HTML report missing or without charts: %v", err)
	}
}

func TestBenchJCTJSON(t *testing.T) {
	_, jobs, vcs := benchJCTFiles(t)
	var out, errOut bytes.Buffer
	code := Main([]string{"bench", "jct", "--trace", "philly:" + jobs, "--vc", vcs, "--window", "full", "--to", "2017-10-01",
		"--policy", "fifo,qssf", "-o", "json"}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep bench.JCTReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	// --to overrides the window's end, so the window is a custom one.
	if rep.Window.Name != "custom" || rep.Jobs != 4 || rep.Skipped["virtual cluster has no quota in the VC file"] != 1 ||
		len(rep.Results) != 2 || rep.Results[1].Policy != "qssf" || rep.Results[1].Wait.Count != 4 {
		t.Errorf("report %+v: want 4 jobs, 1 skipped, fifo and qssf with 4 waits each", rep)
	}
}

func TestBenchJCTBadInput(t *testing.T) {
	dir, _, vcs := benchJCTFiles(t)
	negative := writeTemp(t, dir, "neg.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-01 00:00:00,-60.0,1,60.0,a\n")
	missing := writeTemp(t, dir, "miss.csv", "timestamp,duration,gpu_time,cluster\n2017-10-01 00:00:00,60.0,60.0,a\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative duration", []string{"--trace", "philly:" + negative, "--vc", vcs}, negative + `:2:21: column "duration": "-60.0" is negative`},
		{"missing column", []string{"--trace", "philly:" + missing, "--vc", vcs}, missing + `:1:1: column "num_gpus": required column missing`},
		{"unknown window", []string{"--trace", "philly:" + missing, "--vc", vcs, "--window", "busy"}, `unknown window "busy"`},
		{"too few nodes", []string{"--trace", "philly:" + filepath.Join(dir, "philly.csv"), "--vc", vcs, "--nodes", "1"}, "1 nodes: fewer than the 2 virtual clusters"},
		{"unknown policy", []string{"--trace", "philly:" + filepath.Join(dir, "philly.csv"), "--vc", vcs, "--policy", "lottery"}, `unknown policy "lottery"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(append([]string{"bench", "jct", "--from", "2017-10-01", "--to", "2017-10-01"}, tc.args...), nil, &out, &errOut)
			if code == 0 || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant an error containing %q", code, errOut.String(), tc.want)
			}
		})
	}
}

func TestBenchJCTWindowFlags(t *testing.T) {
	tests := []struct {
		name    string
		f       benchJCTFlags
		changed []string
		want    bench.JCTWindow
	}{
		{name: "flags alone", f: benchJCTFlags{from: "2017-10-01", to: "2017-10-07", nodes: 10},
			want: bench.JCTWindow{Name: "custom", From: "2017-10-01", To: "2017-10-07", Nodes: 10}},
		{name: "named window", f: benchJCTFlags{window: "loaded", from: "2017-10-01", to: "2017-11-30"},
			want: bench.JCTWindow{Name: "loaded", From: "2017-10-01", To: "2017-10-08", Nodes: 88}},
		{name: "nodes override", f: benchJCTFlags{window: "loaded", from: "2017-10-01", to: "2017-11-30", nodes: 50}, changed: []string{"nodes"},
			want: bench.JCTWindow{Name: "custom", From: "2017-10-01", To: "2017-10-08", Nodes: 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.changed = func(name string) bool { return strings.Contains(strings.Join(tc.changed, ","), name) }
			got, err := f.resolveWindow()
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.want.Name || got.From != tc.want.From || got.To != tc.want.To || got.Nodes != tc.want.Nodes {
				t.Errorf("window %+v, want %+v", got, tc.want)
			}
		})
	}
}
