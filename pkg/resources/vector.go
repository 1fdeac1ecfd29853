package resources

import (
	"sort"
	"strings"
)

// Vector maps resource names to amounts. A missing name means zero. Vectors are values
// for callers: every method that returns a Vector returns a new one unless it says it
// works in place.
type Vector map[Name]Amount

// Clone returns an independent copy.
func (v Vector) Clone() Vector {
	out := make(Vector, len(v))
	for k, a := range v {
		out[k] = a
	}
	return out
}

// AddInPlace adds o into v (saturating) and returns v; v must not be nil.
func (v Vector) AddInPlace(o Vector) Vector {
	for k, a := range o {
		v[k] = SatAdd(v[k], a)
	}
	return v
}

// SubInPlace subtracts o from v (saturating, may go negative) and returns v.
func (v Vector) SubInPlace(o Vector) Vector {
	for k, a := range o {
		v[k] = SatAdd(v[k], -a)
	}
	return v
}

// Add returns v + o.
func (v Vector) Add(o Vector) Vector { return v.Clone().AddInPlace(o) }

// Sub returns v - o; entries may be negative.
func (v Vector) Sub(o Vector) Vector { return v.Clone().SubInPlace(o) }

// Scale returns v multiplied by n (saturating).
func (v Vector) Scale(n int64) Vector {
	out := make(Vector, len(v))
	for k, a := range v {
		out[k] = SatMul(a, n)
	}
	return out
}

// Fits reports whether every amount in v is at most the same amount in avail; the
// resources that do not fit are returned sorted, so callers can explain the refusal.
func (v Vector) Fits(avail Vector) (bool, []Name) {
	var short []Name
	for k, a := range v {
		if a > 0 && a > avail[k] {
			short = append(short, k)
		}
	}
	sort.Slice(short, func(i, j int) bool { return short[i] < short[j] })
	return len(short) == 0, short
}

// IsZero reports whether every amount is zero.
func (v Vector) IsZero() bool {
	for _, a := range v {
		if a != 0 {
			return false
		}
	}
	return true
}

// Names returns the resource names with a non-zero amount, sorted.
func (v Vector) Names() []Name {
	out := make([]Name, 0, len(v))
	for k, a := range v {
		if a != 0 {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// String renders the vector deterministically, e.g. "cpu=4,memory=16Gi,nvidia.com/gpu=2".
func (v Vector) String() string {
	var b strings.Builder
	for i, k := range v.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(k))
		b.WriteByte('=')
		b.WriteString(Format(k, v[k]))
	}
	return b.String()
}
