package manifest

import (
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

func capped(w int64, c resources.Amount) weightClaim {
	return weightClaim{weight: w, cap: c, capped: true}
}
func uncapped(w int64) weightClaim { return weightClaim{weight: w} }

func TestWaterFill(t *testing.T) {
	tests := []struct {
		name   string
		pool   resources.Amount
		claims []weightClaim
		want   []resources.Amount
	}{
		{"equal weights", 32, []weightClaim{uncapped(1), uncapped(1)}, []resources.Amount{16, 16}},
		{"by weight", 30, []weightClaim{uncapped(1), uncapped(2), uncapped(3)}, []resources.Amount{5, 10, 15}},
		// 10/3 = 3 each and one left over: the first in order takes it.
		{"remainder in order", 10, []weightClaim{uncapped(1), uncapped(1), uncapped(1)}, []resources.Amount{4, 3, 3}},
		// The capped claim keeps 2 of its 16; the other two share the 30 left.
		{"a cap shares the rest again", 32, []weightClaim{capped(1, 2), uncapped(1), uncapped(2)}, []resources.Amount{2, 10, 20}},
		// First round: 12 each, so c (cap 4) is capped; second: a and b 16 each, so b (cap
		// 10) is capped too; a takes the 22 left.
		{"caps in rounds", 36, []weightClaim{uncapped(1), capped(1, 10), capped(1, 4)}, []resources.Amount{22, 10, 4}},
		// Everyone capped below the pool: the rest stays unshared.
		{"all capped", 100, []weightClaim{capped(1, 3), capped(5, 7)}, []resources.Amount{3, 7}},
		{"a cap exactly at the share", 20, []weightClaim{capped(1, 10), uncapped(1)}, []resources.Amount{10, 10}},
		{"cap 0", 9, []weightClaim{capped(1, 0), uncapped(2)}, []resources.Amount{0, 9}},
		{"empty pool", 0, []weightClaim{uncapped(1)}, []resources.Amount{0}},
		{"no claims", 7, nil, []resources.Amount{}},
		// 1Ti of memory in bytes times a weight near 2^31 overflows 64 bits: no floats, no overflow.
		{"bytes times a large weight", 1 << 40, []weightClaim{uncapped(1<<31 - 1), uncapped(1<<31 - 1)}, []resources.Amount{1 << 39, 1 << 39}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := waterFill(tt.pool, tt.claims); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("waterFill(%d, %+v) = %v, want %v", tt.pool, tt.claims, got, tt.want)
			}
		})
	}
}

// Property: the shares never sum above the pool, none is above its cap, the whole pool
// is shared unless every claim is capped, and a claim below its cap gets at least its
// plain weighted share of the pool (caps only ever give the others more).
func TestWaterFillProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := resources.Amount(rapid.Int64Range(0, 1<<50).Draw(t, "pool"))
		n := rapid.IntRange(1, 6).Draw(t, "claims")
		claims := make([]weightClaim, n)
		weights := int64(0)
		for i := range claims {
			claims[i].weight = rapid.Int64Range(1, 1000).Draw(t, "weight")
			weights += claims[i].weight
			if claims[i].capped = rapid.Bool().Draw(t, "capped"); claims[i].capped {
				claims[i].cap = resources.Amount(rapid.Int64Range(0, 1<<50).Draw(t, "cap"))
			}
		}
		got := waterFill(pool, claims)
		sum, anyOpen := resources.Amount(0), false
		for i, a := range got {
			sum += a
			c := claims[i]
			if c.capped && a > c.cap {
				t.Fatalf("claim %d: %d above its cap %d", i, a, c.cap)
			}
			if !c.capped || a < c.cap {
				anyOpen = true
				if plain := mulDiv(pool, c.weight, weights); a < plain {
					t.Fatalf("claim %d below its cap got %d, less than its plain share %d", i, a, plain)
				}
			}
		}
		if sum > pool {
			t.Fatalf("shares %v sum to %d, above the pool %d", got, sum, pool)
		}
		if anyOpen && sum != pool {
			t.Fatalf("shares %v sum to %d with a claim below its cap: want the whole pool %d", got, sum, pool)
		}
	})
}
