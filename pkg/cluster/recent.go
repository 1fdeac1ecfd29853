package cluster

// recent remembers the last few distinct values built while a snapshot is made. Nodes of
// one pool are neighbours in name order and fleets interleave few pools, so most nodes
// find an equal value here and share it instead of building their own.
type recent[T any] struct {
	vals [4]T
	n    int // values stored, up to len(vals); then the oldest is replaced
}

// find returns a stored value for which same is true.
func (r *recent[T]) find(same func(T) bool) (T, bool) {
	for k := 0; k < min(r.n, len(r.vals)); k++ {
		if same(r.vals[k]) {
			return r.vals[k], true
		}
	}
	var zero T
	return zero, false
}

// put stores v, replacing the oldest value when full.
func (r *recent[T]) put(v T) {
	r.vals[r.n%len(r.vals)] = v
	r.n++
}
