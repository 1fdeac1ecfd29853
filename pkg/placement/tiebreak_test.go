package placement

import (
	"math"
	"math/rand"
	"testing"
)

// drawsZero answers rnd.Intn(n) == 0 and leaves the stream where Intn leaves it, for
// small tie counts, powers of two and counts near 2^31 (where Intn redraws most often).
func TestDrawsZeroIsIntn(t *testing.T) {
	ns := []int{1, 2, 3, 4, 5, 7, 8, 1000, 1024, 7000, 1<<30 - 1, 1 << 30, 1<<30 + 1, math.MaxInt32 - 1, math.MaxInt32, math.MaxInt32 + 1}
	for seed := int64(1); seed <= 5; seed++ {
		a, b := rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(seed))
		for k := 0; k < 200000; k++ {
			n := 1 + k%5000
			if k%3 == 0 {
				n = ns[k%len(ns)]
			}
			if got, want := drawsZero(b, n), a.Intn(n) == 0; got != want {
				t.Fatalf("seed %d draw %d: drawsZero(%d) = %v, Intn says %v", seed, k, n, got, want)
			}
		}
		if a.Int63() != b.Int63() {
			t.Fatalf("seed %d: the streams parted", seed)
		}
	}
}
