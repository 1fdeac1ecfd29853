package admission

import (
	"math/bits"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// compareFractions compares an/(ad·aw) with bn/(bd·bw) exactly, for non-negative
// numerators and positive denominators and weights: an·bd·bw against bn·ad·aw in
// 192-bit integers, so no share is rounded (Kueue's weights reach 10^11 and quota
// amounts 10^12 bytes, past what int64 or float64 products keep exactly).
func compareFractions(an, ad resources.Amount, aw int64, bn, bd resources.Amount, bw int64) int {
	return compare192(mul3(uint64(an), uint64(bd), uint64(bw)), mul3(uint64(bn), uint64(ad), uint64(aw)))
}

// mul3 is x·y·z as three 64-bit words, most significant first.
func mul3(x, y, z uint64) [3]uint64 {
	hi, lo := bits.Mul64(x, y)
	p0hi, p0lo := bits.Mul64(lo, z)
	p1hi, p1lo := bits.Mul64(hi, z)
	mid, carry := bits.Add64(p1lo, p0hi, 0)
	return [3]uint64{p1hi + carry, mid, p0lo}
}

// compare192 compares two 192-bit numbers word by word.
func compare192(a, b [3]uint64) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// compareBools orders false before true.
func compareBools(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
