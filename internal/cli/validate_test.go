package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// runValidate runs `gantry validate args...` in-process.
func runValidate(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(strings.NewReader(stdin), &out, &errOut)
	root.SetArgs(append([]string{"validate"}, args...))
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func TestValidateExamplesSummary(t *testing.T) {
	out, _, err := runValidate(t, "", "-f", "../../examples")
	if err != nil {
		t.Fatal(err)
	}
	// Each line is a fact the summary must state about the shipped examples.
	for _, want := range []string{
		"OK: 4 node pools, 0 nodes, 5 flavors, 1 cohorts, 3 cluster queues, 6 local queues, 4 priority classes, 14 workloads, 1 events",
		"h100-full  8      on-demand      H100-SXM5-80GB  64",
		"nvidia.com/mig-1g.5gb=112",
		"total      16",
		"cohort global",
		"ClusterQueue batch",
		"spot               nvidia.com/gpu         32 / - / 0",
		"team-a/training       -> prod",
		"ml-research/research  5          16",
		"40m0s  SpotInterruption  spot-reclaim  pool spot  notice 2m0s, returns after 30m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q\n%s", want, out)
		}
	}
}

func TestValidateJSON(t *testing.T) {
	out, _, err := runValidate(t, "", "-f", "../../examples", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var s validateSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if s.Totals.GPUs != 128 || s.Counts["workloads"] != 14 || len(s.Cohorts) != 1 || len(s.Cohorts[0].Queues) != 3 {
		t.Errorf("json summary: gpus %d workloads %d cohorts %+v", s.Totals.GPUs, s.Counts["workloads"], s.Cohorts)
	}
}

func TestValidateReportsAllErrorsFromStdin(t *testing.T) {
	bad := `apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: ghost}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {parallelism: -1, bogus: true}
`
	_, stderr, err := runValidate(t, bad, "-f", "-")
	if err == nil || err.Error() != "4 problems found" {
		t.Fatalf("err = %v, want 4 problems found", err)
	}
	// The unknown field does not hide the Job's other problems.
	want := "<stdin>:4: LocalQueue ns/q: spec.clusterQueue: ClusterQueue \"ghost\" not found\n" +
		"<stdin>:9: Job ns/j: spec.bogus: unknown field \"bogus\"\n" +
		"<stdin>:9: Job ns/j: spec.parallelism: -1 is negative\n" +
		"<stdin>:9: Job ns/j: spec.template.spec.containers: a pod needs at least one container\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}

func TestValidateNeedsInput(t *testing.T) {
	if _, _, err := runValidate(t, ""); err == nil || !strings.Contains(err.Error(), "-f PATH") {
		t.Errorf("err = %v, want a hint to use -f", err)
	}
	if _, _, err := runValidate(t, "", "-f", "../../examples", "-o", "yaml"); err == nil {
		t.Error("-o yaml accepted")
	}
}
