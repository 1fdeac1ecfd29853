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
	"github.com/gantry-sched/gantry/pkg/manifest"
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
	if !bytes.Contains(docs[3].text, []byte("name: volcano-default")) {
		t.Errorf("no default flavor emitted for the Volcano queue: %s", docs[3].text)
	}
}

// TestConvertRejectsUnknownKueueField: a field Gantry does not mirror is an error
// naming the file and the field's line, not silently dropped.
func TestConvertRejectsUnknownKueueField(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: a, bogus: 1}\n"
	_, err := ConvertManifests("in.yaml", []byte(in))
	if err == nil || !strings.Contains(err.Error(), "in.yaml:8: LocalQueue q: spec.bogus: ") || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("error = %v, want one naming in.yaml:8 and the field spec.bogus", err)
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
		{"two -f keep both", "", []string{"-f", a, "-f", b}, []string{"LocalQueue ns/a", "ClusterQueue b", "ResourceFlavor volcano-default"}},
		{"--file is -f", "", []string{"--file", b, "-f", a}, []string{"ClusterQueue b", "LocalQueue ns/a", "ResourceFlavor volcano-default"}},
		{"folder, recursively", "", []string{"-f", tree}, []string{"LocalQueue ns/c", "ClusterQueue d", "ResourceFlavor volcano-default"}},
		{"flavor once for two inputs", "", []string{"-f", b, "-f", filepath.Join(tree, "deep")}, []string{"ClusterQueue b", "ClusterQueue d", "ResourceFlavor volcano-default"}},
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
			[]string{bad + ":8: LocalQueue ns/q: spec.bogus: ", `unknown field "bogus"`, missing + ": cannot read", empty + ": holds no objects", "3 problems found"}},
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

// kueueV1beta2Stream holds every Kueue queue kind as Kueue v0.15+ documents them, with
// v1beta2's names (cohortName, MayStopSearch, preference).
const kueueV1beta2Stream = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: default}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpu: h100}, topologyName: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec: {parentName: org, fairSharing: {weight: "2"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohortName: research
  fairSharing: {weight: 500m}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: BorrowingOverPreemption}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  admissionChecksStrategy: {admissionChecks: []}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: team-a, stopPolicy: Hold}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
`

// TestConvertKueueV1beta2: v1beta2 input becomes gantry.dev/v1alpha1 with that
// version's field names, and the output loads to the same queues as the input.
func TestConvertKueueV1beta2(t *testing.T) {
	out, err := ConvertManifests("in.yaml", []byte(kueueV1beta2Stream))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range splitDocs(out) {
		var h typeHeader
		if err := yaml.Unmarshal(d.text, &h); err != nil || h.APIVersion != "gantry.dev/v1alpha1" {
			t.Errorf("output document %s %s: apiVersion %q (%v), want gantry.dev/v1alpha1", h.Kind, h.name(), h.APIVersion, err)
		}
	}
	var cq v1alpha1.ClusterQueue
	for _, d := range splitDocs(out) {
		if bytes.Contains(d.text, []byte("kind: ClusterQueue")) {
			if err := yaml.UnmarshalStrict(d.text, &cq); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cq.Spec.Cohort != "research" || cq.Spec.FlavorFungibility == nil || cq.Spec.FlavorFungibility.WhenCanBorrow != "TryNextFlavor" {
		t.Errorf("ClusterQueue spec = %+v", cq.Spec)
	}
	in, err := manifest.LoadBytes("in.yaml", []byte(kueueV1beta2Stream))
	if err != nil {
		t.Fatal(err)
	}
	conv, err := manifest.LoadBytes("out.yaml", out)
	if err != nil {
		t.Fatalf("converted output does not load: %v\n%s", err, out)
	}
	a, b := in.ClusterQueues[0], conv.ClusterQueues[0]
	if a.Cohort != b.Cohort || a.FlavorFungibility != b.FlavorFungibility || a.FairSharing != b.FairSharing ||
		a.Preemption.ReclaimWithinCohort != b.Preemption.ReclaimWithinCohort || !reflect.DeepEqual(a.ResourceGroups, b.ResourceGroups) {
		t.Errorf("ClusterQueue loads as %+v from v1beta2 but %+v from the conversion", a, b)
	}
	if in.Cohorts[0].Parent != "org" || conv.Cohorts[0].Parent != "org" || conv.Cohorts[0].FairSharing != in.Cohorts[0].FairSharing {
		t.Errorf("Cohort = %+v from v1beta2, %+v converted", in.Cohorts[0], conv.Cohorts[0])
	}
	if lq := conv.LocalQueues[0]; lq.Key() != "ns/q" || lq.StopPolicy != in.LocalQueues[0].StopPolicy {
		t.Errorf("LocalQueue converted to %+v", lq)
	}
	if conv.PriorityClasses[0].Value != 1000 || conv.Flavors[0].TopologyName != "default" || !reflect.DeepEqual(conv.Topologies[0].Levels, in.Topologies[0].Levels) {
		t.Errorf("priority %+v, flavor %+v, topology %+v", conv.PriorityClasses[0], conv.Flavors[0], conv.Topologies[0])
	}
}

// TestConvertKueueVersionErrors: convert refuses what the loader refuses, naming the
// file, the field's line in the whole stream, the object and the field.
func TestConvertKueueVersionErrors(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n" // puts the queue at line 5
	cq := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
	tests := []struct {
		name string
		spec string
		want string
	}{
		{"v1beta1 cohort", "  cohort: org\n", "in.yaml:9: ClusterQueue cq: spec.cohort: not a field of kueue.x-k8s.io/v1beta2 ClusterQueue"},
		{"v1beta1 fungibility value", "  flavorFungibility: {whenCanBorrow: Borrow}\n", "in.yaml:9: ClusterQueue cq: spec.flavorFungibility.whenCanBorrow: \"Borrow\" is the kueue.x-k8s.io/v1beta1 spelling"},
		{"v1beta1 admissionChecks under v1beta2", "  admissionChecks: [prov]\n", "in.yaml:9: ClusterQueue cq: spec.admissionChecks: not a field of kueue.x-k8s.io/v1beta2 ClusterQueue"},
		{"preference without TryNextFlavor", "  flavorFungibility: {whenCanBorrow: MayStopSearch, preference: PreemptionOverBorrowing}\n",
			"in.yaml:9: ClusterQueue cq: spec.flavorFungibility.preference"},
	}
	for _, tc := range tests {
		_, err := ConvertManifests("in.yaml", []byte(ns+cq+tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestConvertKeepsAdmissionChecks: a ClusterQueue's admission checks are converted, and
// the AdmissionCheck and ProvisioningRequestConfig objects, which have no gantry.dev form
// (the controller reads Kueue's own), are passed through unchanged.
func TestConvertKeepsAdmissionChecks(t *testing.T) {
	in := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n" +
		"  admissionChecksStrategy:\n    admissionChecks: [{name: prov}]\n---\n" +
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: prov}\nspec:\n" +
		"  controllerName: kueue.x-k8s.io/provisioning-request\n" +
		"  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: cfg}\n---\n" +
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {name: cfg}\nspec:\n" +
		"  provisioningClassName: check-capacity.autoscaling.x-k8s.io\n"
	out, err := ConvertManifests("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"apiVersion: gantry.dev/v1alpha1\nkind: ClusterQueue", "- name: prov",
		"kind: AdmissionCheck", "controllerName: kueue.x-k8s.io/provisioning-request", "kind: ProvisioningRequestConfig"} {
		if !strings.Contains(text, want) {
			t.Errorf("converted output lacks %q:\n%s", want, text)
		}
	}
	objs, err := manifest.LoadBytes("out.yaml", out)
	if err != nil {
		t.Fatalf("converted output does not load: %v\n%s", err, text)
	}
	if got := objs.AdmissionChecks.ByClusterQueue["cq"]; len(got) != 1 {
		t.Errorf("cq's checks after conversion: %+v, want prov", got)
	}
}
