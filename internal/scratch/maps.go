package scratch

// smallMap is the size up to which Reset keeps a map's memory.
const smallMap = 64

// Reset empties m for reuse. A Go map keeps the table of its largest size after
// clear, and ranging over it walks that whole table: a map that once held 100,000
// keys costs as much to range over when it holds three. So a map that held more than a
// few keys is dropped for a new one, and a small one is cleared in place.
func Reset[M ~map[K]V, K comparable, V any](m M) M {
	if len(m) > smallMap {
		return make(M)
	}
	clear(m)
	return m
}
