package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name → content into a temporary directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSimulateTraces(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,V100M32\nn1,64000,262144,2,V100M32\n",
		"pods.csv": "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
			"p0,1000,1024,1,1000,,LS,Running,0,600,0\np1,1000,1024,1,500,,LS,Running,10,300,10\np2,1000,1024,2,1000,,LS,Running,20,900,20\n",
		"philly.csv":    "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:00,600.0,1,600.0,vc1\n2017-10-09 07:01:00,300.0,8,2400.0,vc1\n2017-10-09 07:02:00,60.0,1,60.0,nope\n",
		"philly_vc.csv": "vc,node num\nvc1,2\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name  string
		trace string
		// wantJobs is the "submitted" count in the summary's "all" row; wantErr a
		// substring of the error instead; wantNote a line expected on stderr.
		wantJobs string
		wantErr  string
		wantNote string
	}{
		{name: "openb", trace: "openb:" + p("nodes.csv") + "," + p("pods.csv"), wantJobs: "3"},
		{name: "philly with default VC file", trace: "philly:" + p("philly.csv"), wantJobs: "2", wantNote: "1 jobs left out"},
		{name: "philly with VC file", trace: "philly:" + p("philly.csv") + "," + p("philly_vc.csv"), wantJobs: "2"},
		{name: "openb lacks pods", trace: "openb:" + p("nodes.csv"), wantErr: "openb takes NODES_CSV,PODS_CSV"},
		{name: "unknown format", trace: "slurm:" + p("nodes.csv"), wantErr: `unknown format "slurm"`},
		{name: "missing file", trace: "philly:" + p("none.csv"), wantErr: "none.csv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "simulate", "--trace", tc.trace, "-o", "json")
			if tc.wantErr != "" {
				if code == 0 || !strings.Contains(errOut, tc.wantErr) {
					t.Fatalf("exit %d, stderr %q: want failure mentioning %q", code, errOut, tc.wantErr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, `"submitted": `+tc.wantJobs+",") {
				t.Errorf("want %s submitted jobs in the KPIs:\n%.600s", tc.wantJobs, out)
			}
			if tc.wantNote != "" && !strings.Contains(errOut, tc.wantNote) {
				t.Errorf("stderr %q: want note %q", errOut, tc.wantNote)
			}
		})
	}
}
