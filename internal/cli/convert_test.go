package cli

import (
	"bytes"
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
