package scratch

import "testing"

// A reset map is empty and usable whatever it held; a small one keeps its identity
// (its memory is reused), a large one is replaced.
func TestReset(t *testing.T) {
	for _, n := range []int{0, 1, smallMap, smallMap + 1, 10_000} {
		m := map[int]bool{}
		for i := 0; i < n; i++ {
			m[i] = true
		}
		before := m
		m = Reset(m)
		if len(m) != 0 {
			t.Fatalf("n=%d: %d keys left after Reset", n, len(m))
		}
		m[1] = true
		if kept := len(before) == 1 && before[1]; kept != (n <= smallMap) {
			t.Fatalf("n=%d: map kept = %v, want %v", n, kept, n <= smallMap)
		}
	}
}
