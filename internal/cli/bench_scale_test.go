package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestBenchScaleCommand(t *testing.T) {
	args := []string{"bench", "scale", "--nodes", "4", "--jobs", "30", "--queues", "4", "--cohorts", "1", "--seed", "5"}
	var out, errOut bytes.Buffer
	if code := Main(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, p := range []string{"4 nodes (32 GPUs), 30 jobs, 4 queues in 1 cohorts, seed 5", "simulate CPU", "peak RSS",
		"jobs finished  30 of 30 (0 never placed)", "makespan", "p95", "pending workloads handed to them"} {
		if !strings.Contains(out.String(), p) {
			t.Errorf("table lacks %q:\n%s", p, out.String())
		}
	}

	out.Reset()
	if code := Main(append(args, "-o", "json"), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var r struct {
		Nodes, GPUs, Jobs, Finished int
		Makespan                    float64
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if r.Nodes != 4 || r.GPUs != 32 || r.Jobs != 30 || r.Finished != 30 || r.Makespan < 600 {
		t.Errorf("json: %+v", r)
	}

	// -o yaml is the same document: the same fields under the same names.
	out.Reset()
	if code := Main(append(args, "-o", "yaml"), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var y struct {
		Nodes, GPUs, Jobs, Finished int
		Makespan                    float64
	}
	if err := yaml.Unmarshal(out.Bytes(), &y); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if y.Nodes != r.Nodes || y.GPUs != r.GPUs || y.Jobs != r.Jobs || y.Finished != r.Finished || y.Makespan != r.Makespan {
		t.Errorf("yaml %+v, json %+v: want the same run", y, r)
	}
}

func TestBenchScaleCommandErrors(t *testing.T) {
	for flag, args := range map[string][]string{
		"--nodes":      {"--nodes", "0"},
		"--jobs":       {"--jobs", "-1"},
		"--queues":     {"--queues", "many"},
		"--cohorts":    {"--queues", "2", "--cohorts", "3"},
		"--spread":     {"--spread", "-1h"},
		"--output":     {"-o", "xml"},
		"--head-order": {"--head-order", "fast"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(append([]string{"bench", "scale"}, args...), nil, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), flag) {
			t.Errorf("%v: exit %d, stderr %q: want an error naming %s", args, code, errOut.String(), flag)
		}
	}
}
