package admission

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Resolver answers the queue questions asked before any quota is looked at: which
// ClusterQueue a workload's LocalQueue points at, whether that ClusterQueue's
// namespaceSelector admits the workload's namespace, and whether a stop policy holds
// either queue. It is the one place these rules live; the engine's Scheduler asks it.
type Resolver struct {
	cqs        map[string]*api.ClusterQueue
	selectors  map[string]labels.Selector
	lqs        map[string]*api.LocalQueue // "namespace/name"
	namespaces map[string]labels.Set
	// anyHeld: some queue has a stop policy that holds admissions (Held is asked for
	// every workload handed to a cycle; most fleets hold none).
	anyHeld bool
}

// Resolution is where a workload's queue leads, or why it leads nowhere usable.
type Resolution struct {
	LocalQueue   string // "namespace/name"
	ClusterQueue string // "" when the LocalQueue or its ClusterQueue is missing
	Code         ReasonCode
	Message      string
}

// OK reports whether the workload may queue in its ClusterQueue.
func (r Resolution) OK() bool { return r.Code == ReasonNone }

// NewResolver indexes the queue objects; a namespaceSelector that does not parse or a
// LocalQueue defined twice is an error naming the object.
func NewResolver(objs *api.Objects) (*Resolver, error) {
	r := &Resolver{cqs: map[string]*api.ClusterQueue{}, selectors: map[string]labels.Selector{},
		lqs: map[string]*api.LocalQueue{}, namespaces: map[string]labels.Set{}}
	for i := range objs.ClusterQueues {
		cq := &objs.ClusterQueues[i]
		sel := labels.Everything() // Kueue: a nil selector selects every namespace
		if cq.NamespaceSelector != nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(cq.NamespaceSelector); err != nil {
				return nil, fmt.Errorf("clusterqueue %q (%s): namespaceSelector: %v", cq.Name, cq.Source, err)
			}
		}
		r.cqs[cq.Name], r.selectors[cq.Name] = cq, sel
		r.anyHeld = r.anyHeld || held(cq.StopPolicy)
	}
	for i := range objs.LocalQueues {
		lq := &objs.LocalQueues[i]
		if _, dup := r.lqs[lq.Key()]; dup {
			return nil, fmt.Errorf("localqueue %s (%s): defined twice", lq.Key(), lq.Source)
		}
		r.lqs[lq.Key()] = lq
		r.anyHeld = r.anyHeld || held(lq.StopPolicy)
	}
	for i := range objs.Namespaces {
		r.namespaces[objs.Namespaces[i].Name] = labels.Set(objs.Namespaces[i].Labels)
	}
	return r, nil
}

// Resolve finds w's ClusterQueue, or the reason it has none it may use.
func (r *Resolver) Resolve(w *api.Workload) Resolution {
	key := w.Namespace + "/" + w.Queue
	lq, ok := r.lqs[key]
	if !ok {
		return Resolution{LocalQueue: key, Code: QueueMissing,
			Message: fmt.Sprintf("localqueue %q does not exist in namespace %q", w.Queue, w.Namespace)}
	}
	if _, ok := r.cqs[lq.ClusterQueue]; !ok {
		return Resolution{LocalQueue: key, Code: ClusterQueueMissing,
			Message: fmt.Sprintf("localqueue %s points at clusterqueue %q, which does not exist", key, lq.ClusterQueue)}
	}
	if !r.selectors[lq.ClusterQueue].Matches(r.namespaceLabels(w.Namespace)) {
		return Resolution{LocalQueue: key, ClusterQueue: lq.ClusterQueue, Code: NamespaceNotSelected,
			Message: fmt.Sprintf("clusterqueue %q's namespaceSelector does not select namespace %q", lq.ClusterQueue, w.Namespace)}
	}
	return Resolution{LocalQueue: key, ClusterQueue: lq.ClusterQueue}
}

// namespaceLabels are a namespace's labels with the one Kubernetes always sets, so a
// selector on kubernetes.io/metadata.name works without Namespace objects.
func (r *Resolver) namespaceLabels(ns string) labels.Set {
	out := labels.Set{"kubernetes.io/metadata.name": ns}
	for k, v := range r.namespaces[ns] {
		out[k] = v
	}
	return out
}

// Held reports whether a stop policy (Hold or HoldAndDrain) of the ClusterQueue or the
// LocalQueue ("namespace/name") stops new admissions, and which queue holds it.
func (r *Resolver) Held(clusterQueue, localQueue string) (string, bool) {
	if !r.anyHeld {
		return "", false
	}
	if cq := r.cqs[clusterQueue]; cq != nil && held(cq.StopPolicy) {
		return "clusterqueue " + clusterQueue + " has stopPolicy " + string(cq.StopPolicy), true
	}
	if lq := r.lqs[localQueue]; lq != nil && held(lq.StopPolicy) {
		return "localqueue " + localQueue + " has stopPolicy " + string(lq.StopPolicy), true
	}
	return "", false
}

func held(p api.StopPolicy) bool { return p == api.StopHold || p == api.StopHoldAndDrain }

// Draining reports whether the ClusterQueue or LocalQueue has stopPolicy HoldAndDrain:
// its admitted workloads are evicted.
func (r *Resolver) Draining(clusterQueue, localQueue string) (string, bool) {
	if cq := r.cqs[clusterQueue]; cq != nil && cq.StopPolicy == api.StopHoldAndDrain {
		return "ClusterQueue " + clusterQueue + " has stop policy HoldAndDrain", true
	}
	if lq := r.lqs[localQueue]; lq != nil && lq.StopPolicy == api.StopHoldAndDrain {
		return "LocalQueue " + localQueue + " has stop policy HoldAndDrain", true
	}
	return "", false
}

// ClusterQueue returns the named ClusterQueue.
func (r *Resolver) ClusterQueue(name string) (*api.ClusterQueue, bool) {
	cq, ok := r.cqs[name]
	return cq, ok
}

// LocalQueue returns the LocalQueue by "namespace/name".
func (r *Resolver) LocalQueue(key string) (*api.LocalQueue, bool) {
	lq, ok := r.lqs[key]
	return lq, ok
}

// AnyDraining reports whether some ClusterQueue or LocalQueue has stop policy
// HoldAndDrain (the engine then looks for running workloads to evict).
func (r *Resolver) AnyDraining() bool {
	for _, cq := range r.cqs {
		if cq.StopPolicy == api.StopHoldAndDrain {
			return true
		}
	}
	for _, lq := range r.lqs {
		if lq.StopPolicy == api.StopHoldAndDrain {
			return true
		}
	}
	return false
}
