package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// addResourceFlavor converts and registers a decoded ResourceFlavor.
func (l *loader) addResourceFlavor(in *v1alpha1.ResourceFlavor, c errs) {
	clusterScoped(in.ObjectMeta, c)
	f := api.ResourceFlavor{
		Meta:        metaOf(in.ObjectMeta, c.src, ""),
		NodeLabels:  in.Spec.NodeLabels,
		NodeTaints:  in.Spec.NodeTaints,
		Tolerations: in.Spec.Tolerations,
	}
	if in.Spec.TopologyName != nil {
		f.TopologyName = *in.Spec.TopologyName
	}
	for i, t := range f.NodeTaints {
		checkTaint(t, joinIndex("spec.nodeTaints", i), c)
	}
	if l.register("ResourceFlavor", f.Meta, c) {
		l.objs.Flavors = append(l.objs.Flavors, f)
	}
}

// checkTaint requires a key and a known effect.
func checkTaint(t corev1.Taint, path string, c errs) {
	if t.Key == "" {
		c.add(path+".key", "missing taint key")
	}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		c.add(path+".effect", "unknown taint effect %q: want NoSchedule, PreferNoSchedule or NoExecute", t.Effect)
	}
}

// addClusterQueue converts and registers a gantry.dev/v1alpha1 ClusterQueue.
func (l *loader) addClusterQueue(in *v1alpha1.ClusterQueue, c errs) {
	l.addClusterQueueFrom(in, gantryDoc(), c)
}

// addClusterQueueFrom converts and registers a decoded ClusterQueue; x says which
// apiVersion it was read under and holds the fields read beside the wire type.
func (l *loader) addClusterQueueFrom(in *v1alpha1.ClusterQueue, x kueueDoc, c errs) {
	clusterScoped(in.ObjectMeta, c)
	s := in.Spec
	q := api.ClusterQueue{
		Meta:              metaOf(in.ObjectMeta, c.src, ""),
		Cohort:            s.Cohort,
		NamespaceSelector: s.NamespaceSelector,
		QueueingStrategy:  queueingStrategy(s.QueueingStrategy, c),
		ResourceGroups:    resourceGroups(s.ResourceGroups, "spec.resourceGroups", c),
		Preemption:        preemption(s.Preemption, c),
		FlavorFungibility: fungibility(s.FlavorFungibility, x, c),
		FairSharing:       api.FairSharing{WeightMilli: weightMilli(s.FairSharing, "spec.fairSharing", c)},
		StopPolicy:        stopPolicy(s.StopPolicy, "spec.stopPolicy", c),
	}
	if s.NamespaceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.NamespaceSelector); err != nil {
			c.add("spec.namespaceSelector", "%v", err)
		}
	}
	if s.AdmissionScope != nil {
		switch s.AdmissionScope.AdmissionMode {
		case "UsageBasedAdmissionFairSharing":
			q.AdmissionFairSharing.Enabled = true
		case "NoAdmissionFairSharing", "":
		default:
			c.add("spec.admissionScope.admissionMode", "unknown value %q: want UsageBasedAdmissionFairSharing or NoAdmissionFairSharing", s.AdmissionScope.AdmissionMode)
		}
	}
	if q.Cohort == "" {
		requireCohortForLimits(q.ResourceGroups, x.path(fieldCohort), c)
	}
	q.FlavorFungibility.Preference = fungibilityPreference(in, x, q.FlavorFungibility, c)
	l.queueAdmissionChecks(q.Name, s, x, c)
	refuseConcurrentAdmission(x, c)
	q.Placement, q.DisruptionBudget = gantryQueueExtensions(q.Annotations, c)
	if l.register("ClusterQueue", q.Meta, c) {
		l.objs.ClusterQueues = append(l.objs.ClusterQueues, q)
	}
}

// requireCohortForLimits: borrowing and lending limits only mean something in a cohort,
// and Kueue rejects them on a queue without one.
func requireCohortForLimits(groups []api.ResourceGroup, cohortPath string, c errs) {
	for gi, g := range groups {
		for fi, f := range g.Flavors {
			for ri, r := range f.Resources {
				p := joinIndex(joinIndex(joinIndex("spec.resourceGroups", gi)+".flavors", fi)+".resources", ri)
				if r.BorrowingLimit != nil {
					c.add(p+".borrowingLimit", "must not be set on a ClusterQueue without %s", cohortPath)
				}
				if r.LendingLimit != nil {
					c.add(p+".lendingLimit", "must not be set on a ClusterQueue without %s", cohortPath)
				}
			}
		}
	}
}

func queueingStrategy(s v1alpha1.QueueingStrategy, c errs) api.QueueingStrategy {
	switch api.QueueingStrategy(s) {
	case "":
		return api.BestEffortFIFO
	case api.StrictFIFO, api.BestEffortFIFO:
		return api.QueueingStrategy(s)
	}
	c.add("spec.queueingStrategy", "unknown value %q: want StrictFIFO or BestEffortFIFO", s)
	return api.BestEffortFIFO
}

func stopPolicy(s *v1alpha1.StopPolicy, path string, c errs) api.StopPolicy {
	if s == nil || *s == "" {
		return api.StopNone
	}
	switch p := api.StopPolicy(*s); p {
	case api.StopNone, api.StopHold, api.StopHoldAndDrain:
		return p
	}
	c.add(path, "unknown value %q: want None, Hold or HoldAndDrain", *s)
	return api.StopNone
}

// preemption converts Kueue's preemption block; absent fields default to Never.
func preemption(p *v1alpha1.ClusterQueuePreemption, c errs) api.Preemption {
	out := api.Preemption{WithinClusterQueue: api.PreemptNever, ReclaimWithinCohort: api.PreemptNever,
		BorrowWithinCohort: api.BorrowWithinCohort{Policy: api.PreemptNever}}
	if p == nil {
		return out
	}
	out.WithinClusterQueue = preemptionPolicy(p.WithinClusterQueue, "spec.preemption.withinClusterQueue", c,
		api.PreemptNever, api.PreemptLowerPriority, api.PreemptLowerOrNewerEqualPriority)
	out.ReclaimWithinCohort = preemptionPolicy(p.ReclaimWithinCohort, "spec.preemption.reclaimWithinCohort", c,
		api.PreemptNever, api.PreemptLowerPriority, api.PreemptAny)
	if b := p.BorrowWithinCohort; b != nil {
		out.BorrowWithinCohort.Policy = preemptionPolicy(v1alpha1.PreemptionPolicy(b.Policy), "spec.preemption.borrowWithinCohort.policy", c,
			api.PreemptNever, api.PreemptLowerPriority)
		out.BorrowWithinCohort.MaxPriorityThreshold = b.MaxPriorityThreshold
	}
	return out
}

func preemptionPolicy(v v1alpha1.PreemptionPolicy, path string, c errs, allowed ...api.PreemptionPolicy) api.PreemptionPolicy {
	if v == "" {
		return api.PreemptNever
	}
	for _, a := range allowed {
		if api.PreemptionPolicy(v) == a {
			return a
		}
	}
	c.add(path, "unknown value %q: want one of %v", v, allowed)
	return api.PreemptNever
}

// fungibility maps Kueue's spellings: Borrow / Preempt (v1beta1, removed in v1beta2) and
// MayStopSearch all mean "stop at this flavor"; TryNextFlavor means "go on".
func fungibility(f *v1alpha1.FlavorFungibility, x kueueDoc, c errs) api.FlavorFungibility {
	out := api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}
	if f == nil {
		return out
	}
	conv := func(v v1alpha1.FlavorFungibilityPolicy, stopWord, path string, def api.FungibilityPolicy) api.FungibilityPolicy {
		switch string(v) {
		case "":
			return def
		case string(api.MayStopSearch):
			return api.MayStopSearch
		case string(api.TryNextFlavor):
			return api.TryNextFlavor
		case stopWord:
			if !x.legacyStopWords() {
				c.add(path, "%q is the kueue.x-k8s.io/v1beta1 spelling, removed in %s: write MayStopSearch", v, x.apiVersion)
			}
			return api.MayStopSearch
		}
		if !x.legacyStopWords() {
			c.add(path, "unknown value %q: want MayStopSearch or TryNextFlavor", v)
			return def
		}
		c.add(path, "unknown value %q: want %s, MayStopSearch or TryNextFlavor", v, stopWord)
		return def
	}
	out.WhenCanBorrow = conv(f.WhenCanBorrow, "Borrow", "spec.flavorFungibility.whenCanBorrow", api.MayStopSearch)
	out.WhenCanPreempt = conv(f.WhenCanPreempt, "Preempt", "spec.flavorFungibility.whenCanPreempt", api.TryNextFlavor)
	return out
}

// addLocalQueue converts and registers a decoded LocalQueue.
func (l *loader) addLocalQueue(in *v1alpha1.LocalQueue, c errs) {
	q := api.LocalQueue{
		Meta:         metaOf(in.ObjectMeta, c.src, DefaultNamespace),
		ClusterQueue: in.Spec.ClusterQueue,
		StopPolicy:   stopPolicy(in.Spec.StopPolicy, "spec.stopPolicy", c),
		FairSharing:  api.FairSharing{WeightMilli: weightMilli(in.Spec.FairSharing, "spec.fairSharing", c)},
	}
	if q.ClusterQueue == "" {
		c.add("spec.clusterQueue", "missing: a LocalQueue must name its ClusterQueue")
	}
	c.name = q.Key()
	if l.register("LocalQueue", q.Meta, c) {
		l.objs.LocalQueues = append(l.objs.LocalQueues, q)
	}
}

// addCohort converts and registers a decoded Cohort.
func (l *loader) addCohort(in *v1alpha1.Cohort, c errs) {
	clusterScoped(in.ObjectMeta, c)
	// Only gantry.dev/v1alpha1 takes both spellings; mapKueueFields lets each Kueue
	// version through with its own.
	parent, parentPath := in.Spec.ParentName, "spec.parentName"
	if in.Spec.Parent != "" {
		if parent != "" && parent != in.Spec.Parent {
			c.add("spec.parent", "conflicts with spec.parentName %q: set one of them", parent)
		}
		parent, parentPath = in.Spec.Parent, "spec.parent"
	}
	co := api.Cohort{
		Meta:           metaOf(in.ObjectMeta, c.src, ""),
		Parent:         parent,
		ResourceGroups: resourceGroups(in.Spec.ResourceGroups, "spec.resourceGroups", c),
		FairSharing:    api.FairSharing{WeightMilli: weightMilli(in.Spec.FairSharing, "spec.fairSharing", c)},
	}
	if co.Parent == co.Name && co.Name != "" {
		c.add(parentPath, "a cohort cannot be its own parent")
		co.Parent = ""
	}
	if l.register("Cohort", co.Meta, c) {
		l.objs.Cohorts = append(l.objs.Cohorts, co)
	}
}

// addWorkloadPriorityClass converts and registers a decoded WorkloadPriorityClass.
func (l *loader) addWorkloadPriorityClass(in *v1alpha1.WorkloadPriorityClass, c errs) {
	clusterScoped(in.ObjectMeta, c)
	pc := api.PriorityClass{Meta: metaOf(in.ObjectMeta, c.src, ""), Kind: api.WorkloadPriority, Value: in.Value}
	if l.register("WorkloadPriorityClass", pc.Meta, c) {
		l.objs.PriorityClasses = append(l.objs.PriorityClasses, pc)
	}
}

func (l *loader) priorityClass(d document, c errs) {
	var in schedulingv1.PriorityClass
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	pc := api.PriorityClass{Meta: metaOf(in.ObjectMeta, c.src, ""), Kind: api.PodPriority, Value: in.Value, GlobalDefault: in.GlobalDefault}
	if in.PreemptionPolicy != nil {
		pc.PreemptionPolicy = string(*in.PreemptionPolicy)
		if p := *in.PreemptionPolicy; p != corev1.PreemptNever && p != corev1.PreemptLowerPriority {
			c.add("preemptionPolicy", "unknown value %q: want PreemptLowerPriority or Never", p)
		}
	}
	if l.register("PriorityClass", pc.Meta, c) {
		l.objs.PriorityClasses = append(l.objs.PriorityClasses, pc)
	}
}

// addTopology converts and registers a decoded Topology.
func (l *loader) addTopology(in *v1alpha1.Topology, c errs) {
	clusterScoped(in.ObjectMeta, c)
	t := api.Topology{Meta: metaOf(in.ObjectMeta, c.src, "")}
	if len(in.Spec.Levels) == 0 {
		c.add("spec.levels", "a topology needs at least one level")
	}
	seen := map[string]bool{}
	for i, lv := range in.Spec.Levels {
		p := joinIndex("spec.levels", i) + ".nodeLabel"
		switch {
		case lv.NodeLabel == "":
			c.add(p, "missing node label")
		case seen[lv.NodeLabel]:
			c.add(p, "level %q is listed twice", lv.NodeLabel)
		default:
			seen[lv.NodeLabel] = true
			t.Levels = append(t.Levels, lv.NodeLabel)
		}
	}
	if l.register("Topology", t.Meta, c) {
		l.objs.Topologies = append(l.objs.Topologies, t)
	}
}

func (l *loader) namespace(d document, c errs) {
	var in corev1.Namespace
	if decode(d, &in, false, c) {
		l.addNamespace(&in, c)
	}
}

// addNamespace converts and registers a decoded Namespace.
func (l *loader) addNamespace(in *corev1.Namespace, c errs) {
	n := api.Namespace{Meta: metaOf(in.ObjectMeta, c.src, "")}
	if l.register("Namespace", n.Meta, c) {
		l.objs.Namespaces = append(l.objs.Namespaces, n)
	}
}
