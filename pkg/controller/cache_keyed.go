package controller

import (
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keyed holds objects by key and remembers their sorted key order until a key comes or
// goes, so a snapshot walks them in a stable order without sorting every pass. The
// order slice is never written once handed out: a change makes a new one.
type keyed[T any] struct {
	items map[string]T
	order []string // sorted keys; nil when stale
	// values are the items in key order as sortedShared last returned them (never
	// written once handed out), and changed the keys put since: the next call patches
	// those into a copy instead of looking every key up again. nil values: none kept.
	values  []T
	changed map[string]bool
}

// put stores v under key.
func (k *keyed[T]) put(key string, v T) {
	if k.items == nil {
		k.items = map[string]T{}
	}
	if _, ok := k.items[key]; !ok {
		k.order, k.values, k.changed = nil, nil, nil
	} else if k.values != nil {
		if k.changed == nil {
			k.changed = map[string]bool{}
		}
		k.changed[key] = true
	}
	k.items[key] = v
}

// del removes key and reports whether it was there.
func (k *keyed[T]) del(key string) bool {
	if _, ok := k.items[key]; !ok {
		return false
	}
	delete(k.items, key)
	k.order, k.values, k.changed = nil, nil, nil
	return true
}

func (k *keyed[T]) get(key string) (T, bool) {
	v, ok := k.items[key]
	return v, ok
}

func (k *keyed[T]) len() int { return len(k.items) }

// keys returns the keys sorted; the caller must not modify the slice.
func (k *keyed[T]) keys() []string {
	if k.order == nil {
		k.order = make([]string, 0, len(k.items))
		for key := range k.items {
			k.order = append(k.order, key)
		}
		sort.Strings(k.order)
	}
	return k.order
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
	if k.values == nil || k.order == nil {
		k.values, k.changed = k.sorted(), nil
		return k.values
	}
	if len(k.changed) > 0 {
		out := slices.Clone(k.values)
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
