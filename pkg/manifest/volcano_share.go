package manifest

import (
	"math/bits"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// weightClaim is one queue's claim on a pool of one resource: its weight and, when it
// states a capability, the most it may take.
type weightClaim struct {
	weight int64
	cap    resources.Amount
	capped bool // cap applies
}

// waterFill shares pool among claims by weight, as Volcano's proportion plugin does: each
// claim gets pool × weight / Σ weights, a claim whose share reaches its cap gets the cap,
// and what it cannot take is shared again among the others until no share is capped.
// Integer amounts only: the units that floor division leaves over go one each to the
// claims in order (the caller orders them by queue name), never above a cap. The result
// is parallel to claims; it never sums above pool.
func waterFill(pool resources.Amount, claims []weightClaim) []resources.Amount {
	out := make([]resources.Amount, len(claims))
	done := make([]bool, len(claims))
	for pool > 0 {
		rest, weights := pool, int64(0)
		for i, c := range claims {
			if done[i] {
				rest -= out[i]
			} else {
				weights += c.weight
			}
		}
		if weights == 0 {
			return out
		}
		if !capShares(rest, weights, claims, out, done) {
			finalShares(rest, weights, claims, out, done)
			return out
		}
	}
	return out
}

// capShares fixes at their cap the open claims whose share of rest reaches it and
// reports whether any did (the others' shares then grow: another round is needed).
func capShares(rest resources.Amount, weights int64, claims []weightClaim, out []resources.Amount, done []bool) bool {
	fixed := false
	for i, c := range claims {
		if !done[i] && c.capped && mulDiv(rest, c.weight, weights) >= c.cap {
			out[i], done[i], fixed = c.cap, true, true
		}
	}
	return fixed
}

// finalShares gives every open claim its floor share of rest and the units left over one
// each in order. No open share reached its cap, so a share plus one stays within it.
func finalShares(rest resources.Amount, weights int64, claims []weightClaim, out []resources.Amount, done []bool) {
	left := rest
	for i, c := range claims {
		if !done[i] {
			out[i] = mulDiv(rest, c.weight, weights)
			left -= out[i]
		}
	}
	for i := range claims {
		if left <= 0 {
			break
		}
		if !done[i] {
			out[i]++
			left--
		}
	}
}

// mulDiv is a × w / total rounded down, for 0 <= a and 0 < w <= total, without overflow
// (bytes of memory times a weight do not fit in 64 bits). The result is at most a.
func mulDiv(a resources.Amount, w, total int64) resources.Amount {
	hi, lo := bits.Mul64(uint64(a), uint64(w))
	q, _ := bits.Div64(hi, lo, uint64(total)) // hi < total because w <= total
	return resources.Amount(q)
}
