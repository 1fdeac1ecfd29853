package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

// TestConvertManifests checks each kind of rewrite on a small mixed stream.
func TestConvertManifests(t *testing.T) {
	in := `apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  cohort: org
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: research
spec:
  weight: 2
  deserved: {nvidia.com/gpu: "4"}
  capability: {nvidia.com/gpu: "16"}
---
apiVersion: v1
kind: Namespace
metadata:
  name: keep-me
`
	out, err := ConvertManifests("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(out)
	if len(docs) != 4 {
		t.Fatalf("got %d documents, want 4 (ClusterQueue, ClusterQueue, Namespace, ResourceFlavor):\n%s", len(docs), out)
	}
	var kueue v1alpha1.ClusterQueue
	if err := yaml.UnmarshalStrict(docs[0].text, &kueue); err != nil {
		t.Fatal(err)
	}
	if kueue.APIVersion != "gantry.dev/v1alpha1" || kueue.Spec.Cohort != "org" ||
		kueue.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota.String() != "8" {
		t.Errorf("Kueue ClusterQueue converted to %+v", kueue)
	}
	var volcano v1alpha1.ClusterQueue
	if err := yaml.UnmarshalStrict(docs[1].text, &volcano); err != nil {
		t.Fatal(err)
	}
	rq := volcano.Spec.ResourceGroups[0].Flavors[0].Resources[0]
	if rq.NominalQuota.String() != "4" || rq.BorrowingLimit == nil || rq.BorrowingLimit.String() != "12" {
		t.Errorf("Volcano queue quota = nominal %s borrowing %v, want 4 and 12", rq.NominalQuota.String(), rq.BorrowingLimit)
	}
	if volcano.Spec.FairSharing == nil || volcano.Spec.FairSharing.Weight.String() != "2" {
		t.Errorf("Volcano weight not carried over: %+v", volcano.Spec.FairSharing)
	}
	if !strings.Contains(string(docs[2].text), "keep-me") {
		t.Errorf("the Namespace was not copied unchanged: %s", docs[2].text)
	}
	if !bytes.Contains(docs[3].text, []byte("name: default-flavor")) {
		t.Errorf("no default flavor emitted for the Volcano queue: %s", docs[3].text)
	}
}

// TestConvertRejectsUnknownKueueField: a field Gantry does not mirror is an error
// naming the file and line, not silently dropped.
func TestConvertRejectsUnknownKueueField(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: a, bogus: 1}\n"
	_, err := ConvertManifests("in.yaml", []byte(in))
	if err == nil || !strings.Contains(err.Error(), "in.yaml:5") || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("error = %v, want one naming in.yaml:5 and the field bogus", err)
	}
}

// runConvert runs `gantry convert args...` in-process.
func runConvert(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(append([]string{"convert"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const (
	kueueLQ       = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: %s, namespace: ns}\nspec: {clusterQueue: cq}\n"
	volcanoQueueA = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {deserved: {nvidia.com/gpu: \"4\"}}\n"
)

// names lists "Kind name" of every document of a converted stream, in order.
func names(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for _, d := range splitDocs([]byte(stream)) {
		var h typeHeader
		if err := yaml.Unmarshal(d.text, &h); err != nil {
			t.Fatalf("output document at line %d: %v", d.line, err)
		}
		out = append(out, h.Kind+" "+h.name())
	}
	return out
}

// TestConvertInputs: -f is repeatable and takes files, folders (recursively) and stdin,
// --file is the same flag, every input is kept in order, and the Volcano flavor comes
// once at the end however many inputs hold queues.
func TestConvertInputs(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.yaml", fmt.Sprintf(kueueLQ, "a"))
	b := writeTemp(t, dir, "b.yml", fmt.Sprintf(volcanoQueueA, "b"))
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTemp(t, tree, "c.yaml", fmt.Sprintf(kueueLQ, "c"))
	writeTemp(t, filepath.Join(tree, "deep"), "d.yml", fmt.Sprintf(volcanoQueueA, "d"))
	writeTemp(t, tree, "notes.txt", "not a manifest")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"two -f keep both", "", []string{"-f", a, "-f", b}, []string{"LocalQueue ns/a", "ClusterQueue b", "ResourceFlavor default-flavor"}},
		{"--file is -f", "", []string{"--file", b, "-f", a}, []string{"ClusterQueue b", "LocalQueue ns/a", "ResourceFlavor default-flavor"}},
		{"folder, recursively", "", []string{"-f", tree}, []string{"LocalQueue ns/c", "ClusterQueue d", "ResourceFlavor default-flavor"}},
		{"flavor once for two inputs", "", []string{"-f", b, "-f", filepath.Join(tree, "deep")}, []string{"ClusterQueue b", "ClusterQueue d", "ResourceFlavor default-flavor"}},
		{"stdin beside a file", fmt.Sprintf(kueueLQ, "s"), []string{"-f", "-", "-f", a}, []string{"LocalQueue ns/s", "LocalQueue ns/a"}},
	}
	for _, tc := range tests {
		stdout, stderr, code := runConvert(t, tc.stdin, tc.args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.name, code, stderr)
			continue
		}
		if got := names(t, stdout); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: documents %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestConvertInputProblems: every problem of every input is named on stderr, and
// nothing goes to stdout, so a redirect never holds half a conversion.
func TestConvertInputProblems(t *testing.T) {
	dir := t.TempDir()
	good := writeTemp(t, dir, "good.yaml", fmt.Sprintf(kueueLQ, "a"))
	empty := writeTemp(t, dir, "empty.yaml", "# to do\n")
	bad := writeTemp(t, dir, "bad.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: ns}\nspec: {clusterQueue: a, bogus: 1}\n")
	noManifests := filepath.Join(dir, "none")
	if err := os.Mkdir(noManifests, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name string
		args []string
		// want are substrings of stderr, one per problem.
		want []string
	}{
		{"no input", nil, []string{"no input: give manifests with -f PATH"}},
		{"empty file", []string{"-f", good, "-f", empty}, []string{empty + ": holds no objects"}},
		{"folder without manifests", []string{"-f", noManifests}, []string{noManifests + ": folder holds no *.yaml, *.yml or *.json files"}},
		{"missing file", []string{"-f", missing}, []string{missing + ": cannot read: no such file or directory"}},
		{"every problem at once", []string{"-f", bad, "-f", missing, "-f", empty},
			[]string{bad + ":5: LocalQueue ns/q: ", `unknown field "bogus"`, missing + ": cannot read", empty + ": holds no objects", "3 problems found"}},
	}
	for _, tc := range tests {
		stdout, stderr, code := runConvert(t, "", tc.args...)
		if code == 0 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want a failure and nothing on stdout", tc.name, code, stdout)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, stderr)
			}
		}
	}
}
