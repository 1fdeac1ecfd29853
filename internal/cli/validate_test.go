package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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
	if _, _, err := runValidate(t, "", "-f", "../../examples", "-o", "xml"); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Errorf("-o xml: err = %v, want a refusal naming --output", err)
	}
}

// TestValidateTextIsTable: -o text, validate's name for the table before -o was one
// vocabulary, still prints the table.
func TestValidateTextIsTable(t *testing.T) {
	table, _, err := runValidate(t, "", "-f", "../../examples", "-o", "table")
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := runValidate(t, "", "-f", "../../examples", "-o", "text")
	if err != nil || text != table || !strings.HasPrefix(text, "OK: ") {
		t.Errorf("-o text printed %q (err %v), want the table", text, err)
	}
}

// validateDoc is what a program reads from `validate -o json|yaml`.
type validateDoc struct {
	Valid    bool              `json:"valid"`
	Counts   map[string]int    `json:"counts"`
	Problems []validateProblem `json:"problems"`
}

const badLocalQueue = `apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: ghost}
`

// TestValidateMachineOutputOnFailure: with -o json or yaml an invalid input still gives
// one document on stdout, with every problem in fields, and a non-zero exit; the human
// lines are not mixed into stdout.
func TestValidateMachineOutputOnFailure(t *testing.T) {
	want := []validateProblem{{File: "<stdin>", Line: 4, Kind: "LocalQueue", Name: "ns/q", Field: "spec.clusterQueue", Message: `ClusterQueue "ghost" not found`}}
	for _, format := range []string{"json", "yaml"} {
		stdout, stderr, err := runValidate(t, badLocalQueue, "-f", "-", "-o", format)
		if err == nil || err.Error() != "1 problem found" {
			t.Errorf("-o %s: err = %v, want 1 problem found", format, err)
		}
		var doc validateDoc
		if err := yaml.UnmarshalStrict([]byte(stdout), &doc); err != nil {
			t.Fatalf("-o %s: stdout is not one document of the expected shape: %v\n%s", format, err, stdout)
		}
		if doc.Valid || doc.Counts != nil || !reflect.DeepEqual(doc.Problems, want) {
			t.Errorf("-o %s: document = %+v, want valid false, no summary and problems %+v", format, doc, want)
		}
		if stderr != "" {
			t.Errorf("-o %s: stderr = %q, want nothing but the command's error", format, stderr)
		}
	}
}

// TestValidateMachineOutputOnSuccess: the same document shape when valid, with the
// summary's fields and an empty (not null) problem list.
func TestValidateMachineOutputOnSuccess(t *testing.T) {
	stdout, _, err := runValidate(t, "", "-f", "../../examples", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc validateDoc
	if err := yaml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Valid || doc.Counts["workloads"] != 14 || doc.Problems == nil || len(doc.Problems) != 0 {
		t.Errorf("document = valid %v, counts %v, problems %#v; want valid, 14 workloads, []", doc.Valid, doc.Counts, doc.Problems)
	}
}

// TestValidateEmptyInputs: an input that holds no object is a problem naming it.
func TestValidateEmptyInputs(t *testing.T) {
	dir := t.TempDir()
	empty := writeTemp(t, dir, "empty.yaml", "")
	comments := writeTemp(t, dir, "comments.yaml", "# nothing yet\n---\n  # still nothing\n---\n")
	good := writeTemp(t, dir, "lq.yaml", "apiVersion: gantry.dev/v1alpha1\nkind: ResourceFlavor\nmetadata: {name: f}\n")
	blankDir := filepath.Join(dir, "blank")
	if err := os.MkdirAll(filepath.Join(blankDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTemp(t, blankDir, "a.yaml", "\n")
	writeTemp(t, filepath.Join(blankDir, "sub"), "b.yml", "---\n")
	tests := []struct {
		name  string
		stdin string
		args  []string
		// want are the problem lines on stderr.
		want string
	}{
		{"empty file", "", []string{"-f", empty}, empty + ": holds no objects: the file is empty or only comments\n"},
		{"comments only", "", []string{"-f", comments}, comments + ": holds no objects: the file is empty or only comments\n"},
		{"empty beside a good file", "", []string{"-f", good, "-f", empty}, empty + ": holds no objects: the file is empty or only comments\n"},
		{"empty stdin", "  \n", []string{"-f", "-"}, "<stdin>: holds no objects: the file is empty or only comments\n"},
		{"folder of empty files", "", []string{"-f", blankDir}, blankDir + ": folder holds no objects: every manifest file in it is empty or only comments\n"},
	}
	for _, tc := range tests {
		_, stderr, err := runValidate(t, tc.stdin, tc.args...)
		if err == nil || stderr != tc.want {
			t.Errorf("%s: err %v, stderr %q; want %q", tc.name, err, stderr, tc.want)
		}
	}
	// A placeholder inside a folder that has objects is not an error.
	writeTemp(t, dir, "placeholder.yml", "# kept for later\n")
	if err := os.Remove(comments); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(empty); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runValidate(t, "", "-f", dir); err != nil || stderr != "" {
		t.Errorf("folder with objects and a placeholder: err %v, stderr %q", err, stderr)
	}
}

// A request no node of the cluster could ever hold fails validation, naming the job,
// the pod set and the node that came closest, in text and in the JSON document.
func TestValidateReportsRequestsThatNeverFit(t *testing.T) {
	dir := t.TempDir()
	job := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nine\n  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: training}\n" +
		"spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits: {nvidia.com/gpu: \"9\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"validate", "-f", "../../examples", "-f", dir}, strings.NewReader(""), &out, &errOut)
	want := "big.yaml:1: Job team-a/nine: pod set main: can never run on this cluster: no node of the cluster can hold one pod"
	if code != 1 || !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "closest: node h100-full-0") {
		t.Fatalf("exit %d, stderr %q; want 1 and %q with the closest node", code, errOut.String(), want)
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"validate", "-o", "json", "-f", "../../examples", "-f", dir}, strings.NewReader(""), &out, &errOut); code != 1 ||
		!strings.Contains(out.String(), `"kind": "Job"`) || !strings.Contains(out.String(), "can never run on this cluster") {
		t.Errorf("json: exit %d, stdout %s", code, out.String())
	}
}
