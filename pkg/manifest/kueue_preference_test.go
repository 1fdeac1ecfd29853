package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

func withPref(f api.FlavorFungibility, p api.FungibilityPreference) api.FlavorFungibility {
	f.Preference = p
	return f
}

// TestFlavorPreferenceAnnotation: gantry.dev/v1alpha1 has no preference field; the
// annotation carries it, read and checked as Kueue's field is.
func TestFlavorPreferenceAnnotation(t *testing.T) {
	doc := "apiVersion: gantry.dev/v1alpha1\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n" +
		"apiVersion: gantry.dev/v1alpha1\nkind: ClusterQueue\nmetadata:\n  name: cq\n" +
		"  annotations: {gantry.dev/flavor-fungibility-preference: PreemptionOverBorrowing}\n" +
		"spec:\n  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor}\n" +
		"  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 1}\n"
	objs, err := LoadBytes("in.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := api.FlavorFungibility{WhenCanBorrow: api.TryNextFlavor, WhenCanPreempt: api.TryNextFlavor, Preference: api.PreemptionOverBorrowing}
	if got := objs.ClusterQueues[0].FlavorFungibility; got != want {
		t.Errorf("fungibility = %+v, want %+v", got, want)
	}
}

// TestConvertKeepsPreemptionOverBorrowing: what `gantry convert` writes (the decoded
// gantry.dev object) carries a Kueue PreemptionOverBorrowing in the annotation, and
// BorrowingOverPreemption (Gantry's default order) adds nothing.
func TestConvertKeepsPreemptionOverBorrowing(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, pref, wantAnn string
	}{
		{kueueV1beta2, "PreemptionOverBorrowing", "PreemptionOverBorrowing"},
		{kueueV1beta1, "PreemptionOverBorrowing", "PreemptionOverBorrowing"},
		{kueueV1beta2, "BorrowingOverPreemption", ""},
	} {
		t.Run(tc.apiVersion+" "+tc.pref, func(t *testing.T) {
			doc := cqDoc(tc.apiVersion, "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: "+tc.pref+"}\n")
			obj, err := ReadKueueObject("in.yaml", 1, []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			cq, ok := obj.(*v1alpha1.ClusterQueue)
			if !ok {
				t.Fatalf("got %T", obj)
			}
			if got := cq.Annotations[AnnotationFlavorPreference]; got != tc.wantAnn {
				t.Errorf("annotation = %q, want %q", got, tc.wantAnn)
			}
			if strings.Contains(tc.apiVersion, "v1beta") && cq.Spec.FlavorFungibility == nil {
				t.Error("flavorFungibility lost")
			}
		})
	}
}
