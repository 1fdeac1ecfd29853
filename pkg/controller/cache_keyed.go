package controller

import (
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keyed holds objects by key and remembers their sorted key order until a key comes or
// goes, so a snapshot walks them in a stable order without sorting every pass. The
// order slice is never written once handed out: a change makes a new one.
type keyed[T any] struct {
	items map[string]T
	order []string // sorted keys; nil when stale
}

// put stores v under key.
func (k *keyed[T]) put(key string, v T) {
	if k.items == nil {
		k.items = map[string]T{}
	}
	if _, ok := k.items[key]; !ok {
		k.order = nil
	}
	k.items[key] = v
}

// del removes key and reports whether it was there.
func (k *keyed[T]) del(key string) bool {
	if _, ok := k.items[key]; !ok {
		return false
	}
	delete(k.items, key)
	k.order = nil
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

// objKey is "namespace/name", or "name" for a cluster-scoped object.
func objKey(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
