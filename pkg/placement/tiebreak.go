package placement

import (
	"math"
	"math/rand"
)

// best returns the index into slots of the best fitting node, ties broken by the seeded
// random (one draw picks among the tied nodes, each equally likely); -1 when none fits.
// It reads the dense scores twice: once for the top score and how many share it, once
// for the tie drawn. (Drawing once per tied node, as reservoir sampling does, was three
// quarters of placing a gang on a uniform fleet of 10,000 nodes.)
func (c *chooser) best() int {
	best, ties := -1, 0
	top := int64(noSlot)
	for k, sc := range c.scores {
		if sc < top || (sc == noSlot && !c.slots[k].ok) {
			continue
		}
		if best < 0 || sc > top {
			best, ties, top = k, 1, sc
			continue
		}
		ties++
	}
	if ties < 2 || c.rnd == nil {
		return best
	}
	pick := c.rnd.Intn(ties)
	for k := best; k < len(c.scores); k++ {
		if c.scores[k] == top && (top != noSlot || c.slots[k].ok) {
			if pick == 0 {
				return k
			}
			pick--
		}
	}
	return best // not reached: the first pass counted ties tied slots
}

// drawsZero reports whether rnd.Intn(n) would return 0, drawing from rnd exactly as
// Intn does, so the random stream after it is the same. The scan policies (policy_scan.go,
// the paper's baselines) break ties by one such draw per tied node, as their reference
// simulator does: Intn divides twice per draw (its rejection bound and the remainder),
// while here the bound is computed only for the rare draws close to it.
//
// For n up to MaxInt32, math/rand's Intn(n) is Int31n(int32(n)): for a power of two,
// Int31() & (n-1); otherwise v := Int31() drawn again while v > max, where max is
// 2^31-1 - 2^31 mod n, and then v % n. Int31 is Int63() >> 32. Since 2^31 mod n < n,
// every v <= 2^31-1-n is below max.
func drawsZero(rnd *rand.Rand, n int) bool {
	if n > math.MaxInt32 {
		return rnd.Intn(n) == 0
	}
	n32 := int32(n)
	v := int32(rnd.Int63() >> 32)
	if n32&(n32-1) == 0 {
		return v&(n32-1) == 0
	}
	if v > math.MaxInt32-n32 {
		v = redraw(rnd, v, n32)
	}
	return v%n32 == 0
}

// redraw is Int31n's rejection loop for a first draw v that may lie above its bound
// (n not a power of two).
func redraw(rnd *rand.Rand, v, n int32) int32 {
	bound := int32((1 << 31) - 1 - (1<<31)%uint32(n))
	for v > bound {
		v = int32(rnd.Int63() >> 32)
	}
	return v
}
