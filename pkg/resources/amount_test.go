package resources

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    Name
		in      string
		want    Amount // canonical unit of name
		wantErr string // substring of the error; empty means success
	}{
		{CPU, "500m", 500, ""},
		{CPU, "2", 2000, ""},
		{CPU, "1.5", 1500, ""},
		{Memory, "64Gi", 64 << 30, ""},
		{Memory, "1G", 1_000_000_000, ""},
		{Memory, "512Mi", 512 << 20, ""},
		{NvidiaGPU, "8", 8, ""},
		{MIGResource("1g.10gb"), "3", 3, ""},
		{GPUMilli, "250", 250, ""},
		{NvidiaGPU, "0.5", 0, "whole number"},
		{NvidiaGPU, "500m", 0, "whole number"},
		{CPU, "-1", 0, "negative"},
		{Memory, "lots", 0, "cannot parse"},
		{Memory, "", 0, "cannot parse"},
		{Memory, "7Ei", 7 << 60, ""},
		{Memory, "1.5", 0, "not a whole number of bytes"},
		{Memory, "1500m", 0, "not a whole number of bytes"},
		{Memory, "9Ei", 0, "8Ei or more"}, // Kubernetes saturates it at 2^63-1 when parsing
		{Memory, "16Ei", 0, "8Ei or more"},
		{Memory, "99999999999999999999", 0, "too large: memory counts at most 9223372036854775807"},
		{CPU, "99999999999999999", 0, "too large: cpu counts at most 9223372036854775807m"},
		{NvidiaGPU, "99999999999999999999", 0, "too large"},
		{CPU, "9223372036854775", 9223372036854775000, ""},
	}
	for _, c := range cases {
		got, err := Parse(c.name, c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%s, %q) error = %v, want it to contain %q", c.name, c.in, err, c.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), string(c.name)) {
				t.Errorf("Parse(%s, %q) error %q does not name the resource", c.name, c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%s, %q) = %d, %v; want %d", c.name, c.in, got, err, c.want)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	cases := []struct {
		name Name
		in   string
		want string // Format(Parse(in))
	}{
		{CPU, "500m", "500m"},
		{CPU, "4", "4"},
		{Memory, "64Gi", "64Gi"},
		{Memory, "1000", "1000"},
		{NvidiaGPU, "8", "8"},
	}
	for _, c := range cases {
		if got := Format(c.name, MustParse(c.name, c.in)); got != c.want {
			t.Errorf("Format(Parse(%q)) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSaturation(t *testing.T) {
	if got := SatAdd(Max-1, 5); got != Max {
		t.Errorf("SatAdd overflow = %d, want Max", got)
	}
	if got := SatAdd(-Max+1, -5); got != -Max {
		t.Errorf("SatAdd underflow = %d, want -Max", got)
	}
	if got := SatMul(Max/2+1, 2); got != Max {
		t.Errorf("SatMul overflow = %d, want Max", got)
	}
	if got := SatMul(Max/2+1, -2); got != -Max {
		t.Errorf("SatMul negative overflow = %d, want -Max", got)
	}
}

func TestVectorFits(t *testing.T) {
	req := Vector{CPU: 4000, NvidiaGPU: 8, Memory: 1 << 30}
	avail := Vector{CPU: 8000, NvidiaGPU: 4, Memory: 1 << 30}
	ok, short := req.Fits(avail)
	if ok || len(short) != 1 || short[0] != NvidiaGPU {
		t.Fatalf("Fits = %v %v, want false [nvidia.com/gpu]", ok, short)
	}
	if ok, _ := (Vector{CPU: 0, "example.com/x": 0}).Fits(Vector{}); !ok {
		t.Fatalf("zero request must fit anywhere")
	}
	if got := req.String(); got != "cpu=4,memory=1Gi,nvidia.com/gpu=8" {
		t.Fatalf("String() = %q", got)
	}
}

// Property: Add then Sub restores the vector (away from saturation), and Add never aliases.
func TestVectorAddSubProperty(t *testing.T) {
	names := []Name{CPU, Memory, NvidiaGPU, GPUMilli}
	gen := rapid.Custom(func(t *rapid.T) Vector {
		v := Vector{}
		for _, n := range names {
			if rapid.Bool().Draw(t, "has-"+string(n)) {
				v[n] = Amount(rapid.Int64Range(-1<<40, 1<<40).Draw(t, string(n)))
			}
		}
		return v
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		before := a.Clone()
		sum := a.Add(b)
		for k, x := range before {
			if a[k] != x {
				t.Fatalf("Add modified its receiver")
			}
		}
		back := sum.Sub(b)
		for _, n := range names {
			if back[n] != before[n] {
				t.Fatalf("(a+b)-b = %v, want %v", back, before)
			}
		}
	})
}

func TestMIGNames(t *testing.T) {
	p, ok := MIGResource("3g.40gb").MIGProfile()
	if !ok || p != "3g.40gb" {
		t.Fatalf("MIGProfile = %q %v", p, ok)
	}
	if _, ok := NvidiaGPU.MIGProfile(); ok {
		t.Fatalf("nvidia.com/gpu is not a MIG resource")
	}
	for _, n := range []Name{NvidiaGPU, NvidiaGPUShared, GPUMilli, GPUMemory, MIGResource("1g.5gb")} {
		if !n.IsGPU() {
			t.Errorf("%s.IsGPU() = false", n)
		}
	}
	if CPU.IsGPU() {
		t.Errorf("cpu.IsGPU() = true")
	}
}

func TestFormatReadable(t *testing.T) {
	for _, tc := range []struct {
		name Name
		a    Amount
		want string
	}{
		{Memory, 32014049792, "29.8Gi"},
		{Memory, 36 << 30, "36Gi"},
		{Memory, 1536, "1.5Ki"},
		{Memory, 1000, "1000"},
		{CPU, 1500, "1500m"},
		{NvidiaGPU, 3, "3"},
	} {
		if got := FormatReadable(tc.name, tc.a); got != tc.want {
			t.Errorf("FormatReadable(%s, %d) = %q, want %q", tc.name, tc.a, got, tc.want)
		}
	}
}
