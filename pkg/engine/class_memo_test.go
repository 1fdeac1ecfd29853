package engine

import "testing"

// A wake's memo answers only what was set in the same wake, including after the
// generation counter wraps, and ignores classes beyond its size.
func TestClassMemoGenerations(t *testing.T) {
	var m classMemo
	m.reset(4).set(2, true)
	if v, ok := m.get(2); !ok || !v {
		t.Fatalf("get(2) = %v, %v; want true, true", v, ok)
	}
	if _, ok := m.get(1); ok {
		t.Fatal("get(1) answered a class never set")
	}
	m.reset(4)
	if _, ok := m.get(2); ok {
		t.Fatal("an answer outlived its wake")
	}
	m.set(9, true) // beyond the size: ignored
	if _, ok := m.get(9); ok {
		t.Fatal("get(9) answered a class beyond the memo's size")
	}
	m.set(3, false)
	m.gen = ^uint32(0) // the next reset wraps
	m.seen[1] = 0      // a mark that would match generation 0
	m.reset(4)
	for c := int32(0); c < 4; c++ {
		if _, ok := m.get(c); ok {
			t.Fatalf("after the wrap, get(%d) answered from an old wake", c)
		}
	}
	m.reset(6).set(5, true)
	if v, ok := m.get(5); !ok || !v {
		t.Fatalf("a grown memo lost class 5: %v, %v", v, ok)
	}
}
