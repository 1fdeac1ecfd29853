package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// kueueObj is a kueue.x-k8s.io object as an informer delivers it.
func kueueObj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	// Through unstructured's own decoder: integers are int64, as an informer has them.
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// kueueCQDoc is a ClusterQueue of 8 GPUs of flavor h100 under apiVersion; cohort is
// the cohort line as that version spells it.
func kueueCQDoc(apiVersion, name, cohort string, generation int) string {
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/%s
kind: ClusterQueue
metadata: {name: %s, generation: %d}
spec:
  %s
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
`, apiVersion, name, generation, cohort)
}

func kueueRF(apiVersion string) string {
	return "apiVersion: kueue.x-k8s.io/" + apiVersion + "\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
}

func kueueLQ(apiVersion, cq string) string {
	return "apiVersion: kueue.x-k8s.io/" + apiVersion + "\nkind: LocalQueue\nmetadata: {name: lq, namespace: team}\nspec: {clusterQueue: " + cq + "}\n"
}

func findCQ(objs *api.Objects, name string) *api.ClusterQueue {
	for i := range objs.ClusterQueues {
		if objs.ClusterQueues[i].Name == name {
			return &objs.ClusterQueues[i]
		}
	}
	return nil
}

// TestKueueObjectsInQueueStore: Kueue's objects of either version are converted by
// the loader's reader of that version and loaded beside the gantry.dev ones; a
// LocalQueue resolves to a Kueue ClusterQueue.
func TestKueueObjectsInQueueStore(t *testing.T) {
	for _, tc := range []struct{ version, cohort string }{
		{"v1beta2", "cohortName: org"},
		{"v1beta1", "cohort: org"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var q queueStore
			for _, doc := range []string{kueueRF(tc.version), kueueCQDoc(tc.version, "gpu", tc.cohort, 1), kueueLQ(tc.version, "gpu")} {
				if changed, ok := q.update(kueueObj(t, doc), false); !changed || !ok {
					t.Fatalf("update = %v, %v; want a change of a queue object", changed, ok)
				}
			}
			q.update(k8s.MakeClusterQueue("own").Quota("h100", "nvidia.com/gpu", "4").Obj(), false)
			objs, problems := q.current()
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			cq := findCQ(objs, "gpu")
			if cq == nil || cq.Cohort != "org" || cq.Preemption.ReclaimWithinCohort != api.PreemptAny || findCQ(objs, "own") == nil {
				t.Fatalf("cluster queues = %+v", objs.ClusterQueues)
			}
			if len(objs.LocalQueues) != 1 || objs.LocalQueues[0].ClusterQueue != "gpu" || !q.hasLocalQueueIn("team") {
				t.Errorf("local queues = %+v", objs.LocalQueues)
			}
		})
	}
}

// TestKueueObjectProblems: a Kueue object whose conversion fails, or whose name a
// gantry.dev object of its kind holds, is left out with a problem naming it; the
// problem is reported once as an event, and again only when it changes.
func TestKueueObjectProblems(t *testing.T) {
	var q queueStore
	q.update(kueueObj(t, kueueRF("v1beta2")), false)
	q.update(kueueObj(t, kueueCQDoc("v1beta2", "bad", "cohort: org", 1)), false) // v1beta1's name
	q.update(kueueObj(t, kueueCQDoc("v1beta2", "both", "cohortName: kueue", 1)), false)
	q.update(k8s.MakeClusterQueue("both").Cohort("gantry").Quota("h100", "nvidia.com/gpu", "4").Obj(), false)
	objs, problems := q.current()
	if findCQ(objs, "bad") != nil {
		t.Error("a ClusterQueue that failed conversion was loaded")
	}
	if cq := findCQ(objs, "both"); cq == nil || cq.Cohort != "gantry" {
		t.Errorf("both = %+v, want the gantry.dev one", cq)
	}
	want := []string{
		`cluster (kueue.x-k8s.io/v1beta2): ClusterQueue bad: spec.cohort: not a field of kueue.x-k8s.io/v1beta2 ClusterQueue`,
		`cluster (kueue.x-k8s.io/v1beta2): ClusterQueue both: a gantry.dev/v1alpha1 ClusterQueue of the same name exists`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems = %q", problems)
	}
	for i := range want {
		if !strings.HasPrefix(problems[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, problems[i], want[i])
		}
	}
	if ev := q.kueue.unreported(); len(ev) != 2 || ev[0].obj.GetName() != "bad" || ev[1].obj.GetName() != "both" {
		t.Fatalf("events = %+v", ev)
	}
	if ev := q.kueue.unreported(); len(ev) != 0 {
		t.Errorf("reported again: %+v", ev)
	}
	if got := q.kueue.inUse("ClusterQueue"); len(got) != 0 {
		t.Errorf("status would be written on %d ClusterQueues with a problem", len(got))
	}
	// The fix converts again; the kueue one is used once the gantry.dev one is gone.
	q.update(kueueObj(t, kueueCQDoc("v1beta2", "bad", "cohortName: org", 2)), false)
	q.update(k8s.MakeClusterQueue("both").Obj(), true)
	objs, problems = q.current()
	if len(problems) != 0 || findCQ(objs, "bad") == nil || findCQ(objs, "both") == nil || findCQ(objs, "both").Cohort != "kueue" {
		t.Errorf("after the fix: problems %q, queues %+v", problems, objs.ClusterQueues)
	}
}

// TestKueueDanglingReferenceIsBlamed: a Kueue LocalQueue naming no ClusterQueue is
// left out by the loader's reference check, and the problem is the LocalQueue's.
func TestKueueDanglingReferenceIsBlamed(t *testing.T) {
	var q queueStore
	q.update(kueueObj(t, kueueLQ("v1beta2", "missing")), false)
	objs, problems := q.current()
	if len(objs.LocalQueues) != 0 || len(problems) != 1 || !strings.Contains(problems[0], "LocalQueue team/lq") {
		t.Fatalf("local queues %+v, problems %q", objs.LocalQueues, problems)
	}
	if ev := q.kueue.unreported(); len(ev) != 1 || ev[0].obj.GetName() != "lq" {
		t.Errorf("events = %+v", ev)
	}
}

// TestKueueStatusWriteIsNoChange: a new version of a Kueue object that differs only in
// status (Gantry's own write) does not make the queue objects convert again, a spec
// change does, and objects of other groups are not queue objects.
func TestKueueStatusWriteIsNoChange(t *testing.T) {
	var q queueStore
	q.update(kueueObj(t, kueueRF("v1beta2")), false)
	q.update(kueueObj(t, kueueCQDoc("v1beta2", "gpu", "cohortName: org", 1)), false)
	q.current()
	withStatus := kueueObj(t, kueueCQDoc("v1beta2", "gpu", "cohortName: org", 1)+"status: {pendingWorkloads: 2}\n")
	if changed, ok := q.update(withStatus, false); changed || !ok {
		t.Errorf("status write: changed %v ok %v", changed, ok)
	}
	if changed, _ := q.update(kueueObj(t, kueueCQDoc("v1beta2", "gpu", "cohortName: other", 2)), false); !changed {
		t.Error("spec change not seen")
	}
	if got := q.kueue.inUse("ClusterQueue"); len(got) != 1 {
		t.Fatalf("in use: %d", len(got))
	}
	if _, ok := q.update(kueueObj(t, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: a}\n"), false); ok {
		t.Error("Kueue's Workload taken as a queue object")
	}
	if _, ok := q.update(kueueObj(t, "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r, namespace: a}\n"), false); ok {
		t.Error("a RayJob taken as a queue object")
	}
	if changed, _ := q.update(kueueObj(t, kueueCQDoc("v1beta2", "gpu", "cohortName: other", 2)), true); !changed {
		t.Error("deletion not seen")
	}
}

// TestFirstServedPrefersV1beta2: the watched version is v1beta2 where served, else
// v1beta1, else none (CRD not installed).
func TestFirstServedPrefersV1beta2(t *testing.T) {
	for _, tc := range []struct {
		name   string
		served []string
		want   string
	}{
		{"both", []string{"v1beta1", "v1beta2"}, "v1beta2"},
		{"older Kueue", []string{"v1beta1"}, "v1beta1"},
		{"v1beta2 only", []string{"v1beta2"}, "v1beta2"},
		{"not installed", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gvk, ok, errs := firstServed("ClusterQueue", func(g schema.GroupVersionKind) error {
				for _, v := range tc.served {
					if v == g.Version {
						return nil
					}
				}
				return errors.New("no matches for kind")
			})
			if ok != (tc.want != "") || gvk.Version != tc.want {
				t.Errorf("got %v %v (%v), want %q", gvk, ok, errs, tc.want)
			}
			if ok && (gvk.Group != kueueGroup || gvk.Kind != "ClusterQueue") {
				t.Errorf("gvk = %v", gvk)
			}
		})
	}
}

// TestKueueCQStatusFields: the status written on a Kueue ClusterQueue carries the
// counts under Kueue's names, and an unchanged status is not written again.
func TestKueueCQStatusFields(t *testing.T) {
	st := kueueCounts(queueCounts{pending: 2, reserving: 1, admitted: 1})
	if st["pendingWorkloads"] != int64(2) || st["reservingWorkloads"] != int64(1) || st["admittedWorkloads"] != int64(1) {
		t.Errorf("counts = %v", st)
	}
	cur := kueueObj(t, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nstatus: {pendingWorkloads: 2, reservingWorkloads: 1, admittedWorkloads: 1, conditions: []}\n").Object["status"].(map[string]any)
	if !sameFields(cur, st) {
		t.Error("the same counts compare as different")
	}
	if sameFields(cur, kueueCounts(queueCounts{pending: 1, admitted: 2})) {
		t.Error("different counts compare as the same")
	}
}

// TestKueuePreferenceOnTheCluster: a v1beta2 ClusterQueue's
// flavorFungibility.preference, which Gantry's own type has no field for, reaches the
// loaded queue from a cluster object as it does from a file.
func TestKueuePreferenceOnTheCluster(t *testing.T) {
	var q queueStore
	q.update(kueueObj(t, kueueRF("v1beta2")), false)
	doc := strings.Replace(kueueCQDoc("v1beta2", "gpu", "cohortName: org", 1), "  namespaceSelector: {}\n",
		"  namespaceSelector: {}\n  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}\n", 1)
	q.update(kueueObj(t, doc), false)
	objs, problems := q.current()
	if cq := findCQ(objs, "gpu"); len(problems) > 0 || cq == nil || cq.FlavorFungibility.Preference != api.PreemptionOverBorrowing {
		t.Fatalf("problems %q, queue %+v", problems, cq)
	}
}
