package controller

import "testing"

// TestWakeupCoalesces: any number of pokes before a pass make exactly one pass, and
// Poke never blocks.
func TestWakeupCoalesces(t *testing.T) {
	w := newWakeup()
	for range 100 {
		w.Poke()
	}
	passes := 0
	for {
		select {
		case <-w.ch:
			passes++
			continue
		default:
		}
		break
	}
	if passes != 1 {
		t.Errorf("100 pokes gave %d passes, want 1", passes)
	}
	w.Poke()
	w.drain()
	select {
	case <-w.ch:
		t.Errorf("a drained poke still woke the loop")
	default:
	}
}
