package admission

import (
	"math/big"
	"math/bits"
	"time"
)

// decayBits is the precision of the fraction of a half-life in decay: 1/65536.
const decayBits = 16

// decayTable holds 2^(-1/2^k) for k = 1..decayBits in Q32 fixed point, built with
// integer square roots so decay is exact integer math and identical on every machine.
type decayTable [decayBits]uint64

func newDecayTable() decayTable {
	var t decayTable
	x := new(big.Int).Lsh(big.NewInt(1), 31) // 1/2 in Q32
	for k := 0; k < decayBits; k++ {
		// sqrt in Q32: sqrt(x / 2^32) * 2^32 = isqrt(x * 2^32)
		x = new(big.Int).Sqrt(new(big.Int).Lsh(x, 32))
		t[k] = x.Uint64()
	}
	return t
}

// decay returns v × 2^(-dt/halfLife), rounded down; halfLife ≤ 0 means no decay.
func (t *decayTable) decay(v int64, dt, halfLife time.Duration) int64 {
	if v <= 0 || dt <= 0 || halfLife <= 0 {
		return v
	}
	whole := dt / halfLife
	if whole >= 63 {
		return 0
	}
	out := uint64(v) >> uint(whole)
	// The fraction of a half-life left, in 1/2^decayBits, computed in milliseconds so the
	// product cannot overflow for any half-life a user writes.
	rem, hl := (dt % halfLife).Milliseconds(), halfLife.Milliseconds()
	if hl == 0 {
		return int64(out)
	}
	frac := uint64(rem) << decayBits / uint64(hl)
	for k := 0; k < decayBits; k++ {
		if frac&(1<<(decayBits-1-k)) != 0 {
			hi, lo := bits.Mul64(out, t[k])
			out = hi<<32 | lo>>32
		}
	}
	return int64(out)
}
