package resources

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Amount is a quantity of one resource in that resource's canonical unit: milli-CPU for
// "cpu", bytes for memory-like resources, a plain count for everything else (GPUs, MIG
// slices, pods, gantry.dev/gpu-milli, gantry.dev/gpu-memory in MiB).
type Amount int64

// Typed units used where a value's unit must not be confused with another.
type (
	// MilliCPU is thousandths of a CPU core.
	MilliCPU int64
	// Bytes is a memory size in bytes.
	Bytes int64
	// MiB is a memory size in mebibytes (GPU memory is always counted in MiB).
	MiB int64
	// MilliGPU is thousandths of one GPU's compute: the common GPU accounting unit.
	MilliGPU int64
)

// MilliPerGPU is the number of MilliGPU in one whole GPU.
const MilliPerGPU MilliGPU = 1000

// Max is the saturation bound of every amount.
const Max Amount = math.MaxInt64

// SatAdd adds without overflow, saturating at ±Max.
func SatAdd(a, b Amount) Amount {
	if b > 0 && a > Max-b {
		return Max
	}
	if b < 0 && a < -Max-b {
		return -Max
	}
	return a + b
}

// SatMul multiplies by a count without overflow, saturating at ±Max.
func SatMul(a Amount, n int64) Amount {
	if a == 0 || n == 0 {
		return 0
	}
	r := a * Amount(n)
	// MinInt64 is outside the symmetric range ±Max, so it counts as overflow too.
	if r/Amount(n) != a || r == -Max-1 {
		if (a > 0) == (n > 0) {
			return Max
		}
		return -Max
	}
	return r
}

// Parse converts a Kubernetes quantity string ("500m", "64Gi", "2") into the canonical
// unit of resource n. Negative values, fractions of integer-counted resources and
// unparsable strings are errors that name the resource and the value.
func Parse(n Name, s string) (Amount, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("%s: cannot parse quantity %q: expected a Kubernetes quantity such as \"500m\", \"64Gi\" or \"2\"", n, s)
	}
	return FromQuantity(n, q)
}

// FromQuantity converts an already parsed Kubernetes quantity into resource n's unit.
func FromQuantity(n Name, q resource.Quantity) (Amount, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s: quantity %s is negative", n, q.String())
	}
	if err := tooLarge(n, q); err != nil {
		return 0, err
	}
	switch unitOf(n) {
	case unitMilli:
		return Amount(q.MilliValue()), nil
	case unitBytes:
		v, ok := q.AsInt64()
		if !ok {
			// Value rounds up; within range (tooLarge) it is exact for whole numbers, and
			// MilliValue would overflow from 8Pi on.
			v = q.Value()
			if q.Cmp(*resource.NewQuantity(v, resource.BinarySI)) != 0 {
				return 0, fmt.Errorf("%s: quantity %s is not a whole number of bytes", n, q.String())
			}
		}
		return Amount(v), nil
	default:
		if q.MilliValue()%1000 != 0 {
			return 0, fmt.Errorf("%s: quantity %s must be a whole number (extended resources are counted in integers)", n, q.String())
		}
		return Amount(q.Value()), nil
	}
}

// tooLarge refuses a quantity beyond what resource n's unit can count. Checked before the
// conversion because an overflowing value wraps there and comes out as a fraction
// ("must be a whole number"), a wrong number or a silently saturated one.
func tooLarge(n Name, q resource.Quantity) error {
	if v, ok := q.AsInt64(); ok && v <= int64(Max/1000) {
		return nil // fits every unit, milli included; skips the parse below
	}
	most := Format(n, Max)
	switch c := q.Cmp(resource.MustParse(most)); {
	case c < 0:
		return nil
	case c == 0 && unitOf(n) == unitBytes:
		// Kubernetes' parser saturates binary quantities of 8Ei and more ("9Ei", "16Ei")
		// at 2^63-1 without an error; no real request is that, so it is refused as written
		// too large rather than read as a silently smaller value.
		return fmt.Errorf("%s: quantity is too large: 8Ei or more, which Kubernetes reads as %s bytes", n, most)
	case c == 0:
		return nil
	}
	return fmt.Errorf("%s: quantity %s is too large: %s counts at most %s", n, q.String(), n, most)
}

// MustParse is Parse for literals in tests and examples; it panics on bad input.
func MustParse(n Name, s string) Amount {
	a, err := Parse(n, s)
	if err != nil {
		panic(err)
	}
	return a
}

// Format renders an amount of resource n the way Kubernetes users write it.
func Format(n Name, a Amount) string {
	switch unitOf(n) {
	case unitMilli:
		if a%1000 == 0 {
			return strconv.FormatInt(int64(a/1000), 10)
		}
		return strconv.FormatInt(int64(a), 10) + "m"
	case unitBytes:
		return formatBytes(int64(a))
	default:
		return strconv.FormatInt(int64(a), 10)
	}
}

// FormatReadable is Format for people: bytes that are not a whole number of the largest
// binary unit below them are shown in it to one decimal place ("29.8Gi", not
// "32014049792"), so amounts printed side by side read in the same unit. It is for
// messages only: Format is exact and reads back.
func FormatReadable(n Name, a Amount) string {
	if unitOf(n) != unitBytes || a < 1024 {
		return Format(n, a)
	}
	exact := Format(n, a)
	if !strings.ContainsAny(exact[len(exact)-1:], "0123456789") {
		return exact // already a whole number of some unit
	}
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i, unit := 0, int64(1)
	for i < len(suffixes)-1 && int64(a) >= unit*1024 {
		unit *= 1024
		i++
	}
	tenths := (int64(a)*10 + unit/2) / unit // rounded to one decimal, integer arithmetic
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + suffixes[i]
}

func formatBytes(b int64) string {
	const ki = 1024
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for i < len(suffixes)-1 && b != 0 && b%ki == 0 {
		b /= ki
		i++
	}
	return strconv.FormatInt(b, 10) + suffixes[i]
}
