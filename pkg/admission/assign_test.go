package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

func TestModeOrder(t *testing.T) {
	if !(NoFit < Preempt && Preempt < Borrow && Borrow < Fit) {
		t.Fatal("modes must be ordered NoFit < Preempt < Borrow < Fit")
	}
	if Fit.String() != "Fit" || Mode(9).String() != "Mode(9)" {
		t.Fatalf("String: %s %s", Fit, Mode(9))
	}
}

func TestFlavorAdmits(t *testing.T) {
	spot := gt.MakeFlavor("spot").Label("cloud/capacity", "spot").Label("gpu", "h100").
		Taint("spot", "true", corev1.TaintEffectNoSchedule).Taint("soft", "x", corev1.TaintEffectPreferNoSchedule).Obj()
	tests := []struct {
		name string
		ps   api.PodSet
		// want says whether the flavor admits the pod set.
		want bool
	}{
		{"untolerated taint", api.PodSet{}, false},
		{"tolerated taint", api.PodSet{Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, true},
		{"selector on a flavor label mismatches", api.PodSet{
			NodeSelector: map[string]string{"gpu": "a100"},
			Tolerations:  []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, false},
		{"selector on a label the flavor lacks is left to placement", api.PodSet{
			NodeSelector: map[string]string{"zone": "a"},
			Tolerations:  []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, true},
		{"affinity NotIn excludes the flavor", api.PodSet{
			Affinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "cloud/capacity", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"spot"}}}}}},
			Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, false},
		{"affinity terms are ORed", api.PodSet{
			Affinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpIn, Values: []string{"a100"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpIn, Values: []string{"h100"}}}},
			}},
			Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := flavorAdmits(&spot, &tt.ps)
			if got != tt.want {
				t.Fatalf("admits=%v (%s), want %v", got, why, tt.want)
			}
			if !got && why == "" {
				t.Fatal("a refusal must say why")
			}
		})
	}
}

func TestTaintedFlavorIsSkippedWithReason(t *testing.T) {
	objs := gt.MakeObjects().Flavors(
		gt.MakeFlavor("spot").Taint("spot", "true", corev1.TaintEffectNoSchedule).Obj(),
		gt.MakeFlavor("ondemand").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(
			gt.MakeFlavorQuotas("spot").Resource(gpu, "8").Obj(),
			gt.MakeFlavorQuotas("ondemand").Resource(gpu, "8").Obj()).Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	a := m.assign(gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj())
	if a.PodSets[0].Flavor(gpu) != "ondemand" || a.PodSets[0].Tried[0].Code != NoFlavorMatches {
		t.Fatalf("got %s, tried %+v; want ondemand after spot is refused for its taint", a.PodSets[0].Flavor(gpu), a.PodSets[0].Tried)
	}
	tol := gt.MakeWorkload("ns-a", "t").Request(gpu, "1").Toleration("spot", "true", corev1.TaintEffectNoSchedule).Obj()
	if f := m.assign(tol).PodSets[0].Flavor(gpu); f != "spot" {
		t.Fatalf("tolerating workload got %s, want spot", f)
	}
	only := gt.MakeWorkload("ns-a", "o").Request(gpu, "1").NodeSelector("missing", "x").Obj()
	only.PodSets[0].Affinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "missing", Operator: corev1.NodeSelectorOpDoesNotExist}}}}}
	objs2 := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Label("missing", "x").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "8").Obj()).Obj()).Obj()
	if a := newAdmitter(t, objs2, Options{}).assign(only); a.Code != NoFlavorMatches {
		t.Fatalf("code %s, want NoFlavorMatches", a.Code)
	}
}

func TestPodSetsShareQuota(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj(), gt.MakeFlavor("a100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(
			gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Resource("cpu", "64").Obj(),
			gt.MakeFlavorQuotas("a100").Resource(gpu, "8").Resource("cpu", "64").Obj()).Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	// The launcher takes h100; the workers no longer fit there and go to a100.
	w := gt.MakeWorkload("ns-a", "mpi").PodSet("launcher", 1).Request(gpu, "4").Request("cpu", "2").
		PodSet("workers", 2).Request(gpu, "4").Request("cpu", "8").Obj()
	a := m.assign(w)
	if a.Mode != Fit || a.PodSets[0].Flavor(gpu) != "h100" || a.PodSets[1].Flavor(gpu) != "a100" {
		t.Fatalf("got %s: %s", a.Mode, a)
	}
	want := []FlavorAmount{
		{FlavorResource{"a100", "cpu"}, 16000}, {FlavorResource{"a100", gpu}, 8},
		{FlavorResource{"h100", "cpu"}, 2000}, {FlavorResource{"h100", gpu}, 4},
	}
	if len(a.Usage) != len(want) {
		t.Fatalf("usage %v, want %v", a.Usage, want)
	}
	for i := range want {
		if a.Usage[i] != want[i] {
			t.Fatalf("usage[%d] = %v, want %v", i, a.Usage[i], want[i])
		}
	}
}

func TestGPUFormsCountIntoCommonUnit(t *testing.T) {
	milli := resources.GPUMilli
	mig := resources.MIGResource("1g.10gb")
	objs := gt.MakeObjects().Flavors(
		gt.MakeFlavor("h100").Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").Obj(),
		gt.MakeFlavor("ts").Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").Label("nvidia.com/gpu.replicas", "4").Obj(),
	).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(milli, "4000").Resource(mig, "7").Obj()).Obj(),
		gt.MakeClusterQueue("b").ResourceGroup(gt.MakeFlavorQuotas("ts").Resource(milli, "1000").Obj()).Obj(),
	).Obj()
	tests := []struct {
		name string
		wl   *api.Workload
		// want is the gpu-milli usage; wantMIG the MIG quota usage.
		want, wantMIG resources.Amount
	}{
		{"whole GPUs", gt.MakeWorkload("ns-a", "w").PodSet("p", 2).Request(gpu, "1").Obj(), 2000, 0},
		{"MIG profile counts in both names", gt.MakeWorkload("ns-a", "w").PodSet("p", 3).Request(mig, "1").Obj(), 3 * 142, 3},
		{"fraction as itself", gt.MakeWorkload("ns-a", "w").Request(milli, "250").Obj(), 250, 0},
		{"time-sliced replica is a quarter", gt.MakeWorkload("ns-b", "w").PodSet("p", 3).Request(gpu, "1").Obj(), 750, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newAdmitter(t, objs, Options{})
			a := m.assign(tt.wl)
			if !a.Fits() {
				t.Fatalf("%s: %s", a.Mode, a.Message)
			}
			var got, gotMIG resources.Amount
			for _, u := range a.Usage {
				switch u.Resource {
				case milli:
					got = u.Amount
				case mig:
					gotMIG = u.Amount
				}
			}
			if got != tt.want || gotMIG != tt.wantMIG || a.GPUMilli != resources.MilliGPU(tt.want) {
				t.Fatalf("gpu-milli %d (GPUMilli %d), mig %d; want %d, %d", got, a.GPUMilli, gotMIG, tt.want, tt.wantMIG)
			}
		})
	}
}

func TestExplanationNamesCohortAndQuota(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("global").Preemption(api.PreemptLowerPriority, api.PreemptNever).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "128").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("global").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	for i := 0; i < 31; i++ {
		w := gt.MakeWorkload("ns-a", "w").Request(gpu, "4").Obj()
		w.Name = w.Name + string(rune('a'+i))
		mustAdmit(t, m, w, Fit)
	}
	a := m.assign(gt.MakeWorkload("ns-a", "big").Request(gpu, "8").Obj())
	want := "needs 8 nvidia.com/gpu in flavor h100, 4 free of nominal 128, cannot borrow: cohort global has 0 unused"
	if a.Mode != Preempt || a.PodSets[0].Tried[0].Reasons[0].String() != want {
		t.Fatalf("mode %s, reason %q; want Preempt, %q", a.Mode, a.PodSets[0].Tried[0].Reasons, want)
	}
}

func TestAdmitRechecksQuota(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	w1 := gt.MakeWorkload("ns-a", "w1").Request(gpu, "6").Obj()
	w2 := gt.MakeWorkload("ns-a", "w2").Request(gpu, "6").Obj()
	a1, a2 := m.assign(w1), m.assign(w2) // both computed on the empty queue
	if err := m.Admit(w1, a1); err != nil {
		t.Fatal(err)
	}
	if err := m.Admit(w2, a2); err == nil {
		t.Fatal("stale assignment admitted beyond quota")
	}
	if err := m.Admit(w1, a1); err == nil {
		t.Fatal("double admission accepted")
	}
	if err := m.Quota.Release("ns-a/none"); err == nil {
		t.Fatal("release of an unknown workload accepted")
	}
}

func TestNewQuotaErrors(t *testing.T) {
	neg := resources.Amount(-1)
	bad := gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()
	bad.Resources[0].LendingLimit = &neg
	tests := []struct {
		name string
		objs *api.Objects
		// want is a substring the error must contain (naming object and field).
		want string
	}{
		{"unknown flavor", gt.MakeObjects().ClusterQueues(gpuCQ("a").Obj()).Obj(), `clusterqueue "a": resourceGroups[0].flavors[0].name: ResourceFlavor "h100" not found`},
		{"negative lending limit", gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
			gt.MakeClusterQueue("a").Cohort("c").ResourceGroup(bad).Obj()).Obj(), `clusterqueue "a": resourceGroups[0].flavors[0].resources[0].lendingLimit`},
		{"borrowing limit without cohort", gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
			gt.MakeClusterQueue("a").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Borrow("2").Obj()).Obj()).Obj(), "has no parent cohort"},
		{"resource in two groups", gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
			gpuCQ("a").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj()).Obj(), "already covered by resourceGroups[0]"},
		{"cohort cycle", gt.MakeObjects().Cohorts(gt.MakeCohort("x").Parent("y").Obj(), gt.MakeCohort("y").Parent("x").Obj()).Obj(), "cycle"},
		{"duplicate clusterqueue", gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj(), gpuCQ("a").Obj()).Obj(), "defined twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewQuota(tt.objs, Options{})
			if err == nil || !contains1(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := NewQuota(&api.Objects{}, Options{FairSharing: FairSharingConfig{Enabled: true, Strategies: []FairStrategy{"Bogus"}}}); err == nil {
		t.Fatal("unknown fair sharing strategy accepted")
	}
}

func contains1(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestExcludedResourcesAreIgnored(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	w := gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Request(resources.EphemeralStorage, "10Gi").Obj()
	if a := newAdmitter(t, objs, Options{}).assign(w); a.Code != ResourceNotCovered {
		t.Fatalf("without exclusion: %s, want ResourceNotCovered", a.Code)
	}
	m := newAdmitter(t, objs, Options{ExcludeResourcePrefixes: []string{"ephemeral-"}})
	if a := m.assign(w); a.Mode != Fit {
		t.Fatalf("with exclusion: %s (%s), want Fit", a.Mode, a.Message)
	}
}

func TestAssignWithoutExcludedFlavors(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("spot").Obj(), gt.MakeFlavor("ondemand").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(
			gt.MakeFlavorQuotas("spot").Resource(gpu, "8").Obj(),
			gt.MakeFlavorQuotas("ondemand").Resource(gpu, "8").Obj()).Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	w := gt.MakeWorkload("ns-a", "w").Request(gpu, "2").Obj()
	a := m.Quota.AssignWithout(w, "a", map[string]bool{"spot": true})
	if a.Mode != Fit || a.PodSets[0].Flavor(gpu) != "ondemand" || a.PodSets[0].Tried[0].Reasons[0].String() != "excluded by the caller" {
		t.Fatalf("got %s, tried %+v; want ondemand with spot excluded", a, a.PodSets[0].Tried)
	}
	if a := m.Quota.AssignWithout(w, "a", map[string]bool{"spot": true, "ondemand": true}); a.Code != NoFlavorMatches {
		t.Fatalf("all excluded: %s, want NoFlavorMatches", a.Code)
	}
}

// Quota's own refusals of a workload it cannot rate, after the queue has resolved.
func TestAssignRefusesWhatItCannotRate(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	tests := []struct {
		name string
		wl   *api.Workload
		want ReasonCode
	}{
		{"resource no group covers", gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Request("cpu", "4").Obj(), ResourceNotCovered},
		{"no pod sets", &api.Workload{Meta: api.Meta{Name: "w", Namespace: "ns-a"}, Queue: "lq"}, InvalidWorkload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a := m.assign(tt.wl); a.Mode != NoFit || a.Code != tt.want {
				t.Fatalf("assign %s/%s (%s), want NoFit/%s", a.Mode, a.Code, a.Message, tt.want)
			}
		})
	}
}
