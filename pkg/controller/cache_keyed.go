package controller

import (
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keyed holds objects by key and keeps their sorted key order, so a snapshot walks them
// in a stable order without sorting every pass. A key that comes or goes is merged into
// the order at the next read (a sort of the few new keys and one walk), not sorted in
// again with all the others: a 100,000-pod cluster gains and loses pods every pass, and
// sorting every key each time was a tenth of a pass. Order slices are never written once
// handed out: a change makes a new one.
type keyed[T any] struct {
	items map[string]T
	order []string // sorted keys as of the last read; nil when never built
	// added are the keys put since order was built that it lacks, removed those it has
	// that were deleted since.
	added, removed map[string]bool
	// values are the items in key order as sortedShared last returned them (never
	// written once handed out), and changed the keys in order put since: the next call
	// patches those into a copy instead of looking every key up again. nil values: none
	// kept.
	values  []T
	changed map[string]bool
}

// put stores v under key.
func (k *keyed[T]) put(key string, v T) {
	if k.items == nil {
		k.items = map[string]T{}
	}
	if _, ok := k.items[key]; !ok && k.order != nil {
		if k.removed[key] {
			delete(k.removed, key) // back in the order's slot it never left
			k.markChanged(key)
		} else {
			k.added = setAdd(k.added, key)
		}
	} else if ok && k.order != nil && !k.added[key] {
		k.markChanged(key)
	}
	k.items[key] = v
}

// markChanged notes that key, in the order, holds a new value the kept values lack.
func (k *keyed[T]) markChanged(key string) {
	if k.values != nil {
		k.changed = setAdd(k.changed, key)
	}
}

// del removes key and reports whether it was there.
func (k *keyed[T]) del(key string) bool {
	if _, ok := k.items[key]; !ok {
		return false
	}
	delete(k.items, key)
	switch {
	case k.order == nil:
	case k.added[key]:
		delete(k.added, key)
	default:
		k.removed = setAdd(k.removed, key)
		delete(k.changed, key)
	}
	return true
}

func setAdd(m map[string]bool, key string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[key] = true
	return m
}

func (k *keyed[T]) get(key string) (T, bool) {
	v, ok := k.items[key]
	return v, ok
}

func (k *keyed[T]) len() int { return len(k.items) }

// keys returns the keys sorted; the caller must not modify the slice.
func (k *keyed[T]) keys() []string {
	k.refresh()
	return k.order
}

// refresh brings the order (and the kept values) up to date: built anew the first time
// or when most keys changed, else merged with the keys added and removed since.
func (k *keyed[T]) refresh() {
	if k.order != nil && len(k.added) == 0 && len(k.removed) == 0 {
		return
	}
	if k.order == nil || 4*(len(k.added)+len(k.removed)) > len(k.order) {
		k.order = make([]string, 0, len(k.items))
		for key := range k.items {
			k.order = append(k.order, key)
		}
		sort.Strings(k.order)
		k.added, k.removed, k.values, k.changed = nil, nil, nil, nil
		return
	}
	fresh := make([]string, 0, len(k.added))
	for key := range k.added {
		fresh = append(fresh, key)
	}
	sort.Strings(fresh)
	order := make([]string, 0, len(k.items))
	var values []T
	if k.values != nil {
		values = make([]T, 0, len(k.items))
	}
	i, j := 0, 0
	for i < len(k.order) || j < len(fresh) {
		if j == len(fresh) || (i < len(k.order) && k.order[i] < fresh[j]) {
			key := k.order[i]
			if !k.removed[key] {
				order = append(order, key)
				if values != nil {
					values = append(values, k.values[i]) // patched below if changed
				}
			}
			i++
			continue
		}
		order = append(order, fresh[j])
		if values != nil {
			values = append(values, k.items[fresh[j]])
		}
		j++
	}
	k.order, k.values, k.added, k.removed = order, values, nil, nil
}

// sorted returns the values in key order.
func (k *keyed[T]) sorted() []T {
	out := make([]T, 0, len(k.items))
	for _, key := range k.keys() {
		out = append(out, k.items[key])
	}
	return out
}

// sortedShared is sorted for a caller that only reads the slice: it is kept and
// handed out again, patched with the values put since rather than rebuilt (the pods of
// a 100,000-pod cluster were looked up one by one for every pass's snapshot).
func (k *keyed[T]) sortedShared() []T {
	merged := len(k.added) > 0 || len(k.removed) > 0
	k.refresh()
	if k.values == nil {
		k.values, k.changed = k.sorted(), nil
		return k.values
	}
	if len(k.changed) > 0 {
		out := k.values
		if !merged { // a merge made a new slice already; else copy the handed-out one
			out = slices.Clone(k.values)
		}
		for key := range k.changed {
			i, _ := slices.BinarySearch(k.order, key)
			out[i] = k.items[key]
		}
		k.values, k.changed = out, nil
	}
	return k.values
}

// objKey is "namespace/name", or "name" for a cluster-scoped object.
func objKey(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
