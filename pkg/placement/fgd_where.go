package placement

import (
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// Where a pod shape may run is part of the shape: a pod that can only use one GPU model
// finds every free GPU of another model useless (the paper's "no access" fragment), so a
// node of a scarce model should be kept for the pods that need it. A shape's place is a
// set of label requirements, each a key and the values allowed for it, all of which a
// node must meet; they come from the pod's node selector and required node affinity.
// The fragmentation scorer reads, for each node, the set of places it meets as a bit
// mask built from a few map reads (see whereTable.mask), so looking at a node costs the
// same whatever the number of shapes.

// labelReq is one requirement: the node's label key must hold one of values (sorted).
type labelReq struct {
	key    string
	values []string
}

// placeID numbers a place in a whereTable; 0 is "anywhere".
type placeID uint8

// maxPlaces bounds the places one table tells apart (bits of a uint64 mask, "anywhere"
// included). Shapes with further places are counted as "anywhere": a workload with more
// than 63 distinct node constraints among its GPU pods gets no protection for the rest.
const maxPlaces = 64

// whereTable numbers the distinct places observed and, per label key they read, which
// places each label value meets.
type whereTable struct {
	keys   []string // the canonical rendering of each place, by placeID (0: "")
	byKey  map[string]*keyMasks
	allSet uint64 // the bits of every place numbered so far
}

// keyMasks says, for one label key, which places a node with a given value meets:
// those listing the value for the key, plus those that do not read the key at all.
type keyMasks struct {
	byValue  map[string]uint64
	ignoring uint64
}

// placeOf reads a pod set's place: its node selector and required node affinity. An
// affinity of several terms is read only when every term is one In requirement on the
// same key (the values are then merged); other operators and other shapes of affinity
// are not read, and a pod set without any readable requirement may run anywhere.
func placeOf(ps *api.PodSet) []labelReq {
	var reqs []labelReq
	for k, v := range ps.NodeSelector {
		reqs = append(reqs, labelReq{key: k, values: []string{v}})
	}
	if ps.Affinity != nil {
		reqs = append(reqs, affinityReqs(ps.Affinity)...)
	}
	return normalizeReqs(reqs)
}

// affinityReqs reads the In requirements of a required node affinity (see placeOf).
func affinityReqs(a *corev1.NodeSelector) []labelReq {
	terms := a.NodeSelectorTerms
	if len(terms) == 1 {
		var out []labelReq
		for _, e := range terms[0].MatchExpressions {
			if e.Operator == corev1.NodeSelectorOpIn {
				out = append(out, labelReq{key: e.Key, values: slices.Clone(e.Values)})
			}
		}
		return out
	}
	var merged labelReq
	for _, t := range terms {
		if len(t.MatchExpressions) != 1 || len(t.MatchFields) != 0 {
			return nil
		}
		e := t.MatchExpressions[0]
		if e.Operator != corev1.NodeSelectorOpIn || (merged.key != "" && e.Key != merged.key) {
			return nil
		}
		merged.key = e.Key
		merged.values = append(merged.values, e.Values...)
	}
	if merged.key == "" {
		return nil
	}
	return []labelReq{merged}
}

// normalizeReqs sorts requirements by key, merges those on one key (a node must meet
// both: the values they share) and sorts and deduplicates values.
func normalizeReqs(reqs []labelReq) []labelReq {
	slices.SortFunc(reqs, func(a, b labelReq) int { return strings.Compare(a.key, b.key) })
	var out []labelReq
	for _, r := range reqs {
		vals := slices.Compact(slices.Sorted(slices.Values(r.values)))
		if n := len(out); n > 0 && out[n-1].key == r.key {
			out[n-1].values = slices.DeleteFunc(out[n-1].values, func(v string) bool { _, in := slices.BinarySearch(vals, v); return !in })
			continue
		}
		out = append(out, labelReq{key: r.key, values: vals})
	}
	return out
}

// renderPlace is a place's canonical text ("" for anywhere).
func renderPlace(reqs []labelReq) string {
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(r.key)
		b.WriteByte('=')
		b.WriteString(strings.Join(r.values, "|"))
		b.WriteByte(';')
	}
	return b.String()
}

// id numbers a place, adding it when new; past maxPlaces a new place is 0 (anywhere).
func (w *whereTable) id(reqs []labelReq) placeID {
	if len(reqs) == 0 {
		return 0
	}
	text := renderPlace(reqs)
	if len(w.keys) == 0 {
		w.keys, w.allSet = []string{""}, 1
	}
	if k := slices.Index(w.keys, text); k >= 0 {
		return placeID(k)
	}
	if len(w.keys) >= maxPlaces {
		return 0
	}
	id := placeID(len(w.keys))
	bit := uint64(1) << id
	w.keys = append(w.keys, text)
	if w.byKey == nil {
		w.byKey = map[string]*keyMasks{}
	}
	for key, km := range w.byKey {
		if !slices.ContainsFunc(reqs, func(r labelReq) bool { return r.key == key }) {
			km.ignoring |= bit
		}
	}
	for _, r := range reqs {
		km := w.byKey[r.key]
		if km == nil {
			// Every place numbered before ignores this key.
			km = &keyMasks{byValue: map[string]uint64{}, ignoring: w.allSet}
			w.byKey[r.key] = km
		}
		for _, v := range r.values {
			km.byValue[v] |= bit
		}
	}
	w.allSet |= bit
	return id
}

// mask is the set of places a node with these labels meets (bit 0, anywhere, always).
func (w *whereTable) mask(labels map[string]string) uint64 {
	m := w.allSet | 1
	for key, km := range w.byKey {
		v, ok := labels[key]
		meets := km.ignoring
		if ok {
			meets |= km.byValue[v]
		}
		m &= meets
	}
	return m
}

// constrained reports whether any place other than anywhere was observed.
func (w *whereTable) constrained() bool { return len(w.keys) > 1 }

// text is place id's canonical rendering ("" for anywhere).
func (w *whereTable) text(id placeID) string {
	if int(id) < len(w.keys) {
		return w.keys[id]
	}
	return ""
}
