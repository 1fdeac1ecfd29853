package controller

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// provReqEntry is what a pass reads of one ProvisioningRequest: its conditions and
// the Workload it was made for (labelProvReqWorkload).
type provReqEntry struct {
	conds    provReqConditions
	workload types.UID
	// class is spec.provisioningClassName, templates the names of spec.podSets[].
	// podTemplateRef, details status.provisioningClassDetails: what podSetUpdates read
	// (podsetupdates.go).
	class     string
	templates []string
	details   map[string]string
}

// readProvReqEntry reads what a pass needs of an unstructured ProvisioningRequest.
func readProvReqEntry(u *unstructured.Unstructured) provReqEntry {
	e := provReqEntry{conds: readProvReqConditions(u), workload: types.UID(u.GetLabels()[labelProvReqWorkload])}
	e.class, _, _ = unstructured.NestedString(u.Object, "spec", "provisioningClassName")
	sets, _, _ := unstructured.NestedSlice(u.Object, "spec", "podSets")
	for _, s := range sets {
		if m, ok := s.(map[string]any); ok {
			if name, _, _ := unstructured.NestedString(m, "podTemplateRef", "name"); name != "" {
				e.templates = append(e.templates, name)
			}
		}
	}
	// Detail values are strings in the API (a map of string to string).
	e.details, _, _ = unstructured.NestedStringMap(u.Object, "status", "provisioningClassDetails")
	return e
}

// applyProvReq records a ProvisioningRequest (or forgets it when deleted) if o is one;
// it reports whether it was. Every change wakes a pass: the autoscaler writes a
// request's conditions only when its state moves.
func (c *stateCache) applyProvReq(o client.Object, deleted bool) bool {
	u, ok := o.(*unstructured.Unstructured)
	if !ok || u.GroupVersionKind() != provReqGVK() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if deleted {
		c.provReqs.del(objKey(u))
		return true
	}
	c.provReqs.put(objKey(u), readProvReqEntry(u))
	return true
}

// provReqSnapshot copies the requests for a pass ("namespace/name"; entries are
// never edited in place, so they are shared).
func (c *stateCache) provReqSnapshot() map[string]provReqEntry {
	return maps.Clone(c.provReqs.items)
}

// requestsOf reports whether any request made for the Workload of uid is cached.
func (w *world) requestsOf(uid types.UID) bool {
	for _, e := range w.provReqs {
		if e.workload == uid {
			return true
		}
	}
	return false
}
