package devices

import "github.com/gantry-sched/gantry/pkg/resources"

// MIG geometries. Start slots are those NVML's GPU-instance possible placements report
// (nvidia-smi mig -lgipp): on 8-slice GPUs 1g starts at 0..6, the two-slice 1g and 2g
// at even slots (1g: 0,2,4,6; 2g: 0,2,4), 3g at 0 or 4, 4g and 7g at 0 only; on 4-slice
// GPUs (A30, RTX PRO 6000) 1g at 0..3, 2g at 0 or 2, 4g at 0.
//
// Memory is NVML's GPU-instance figure (MemorySizeMB) where it is known: A100 and A30 as
// the drivers report them (go-nvml's profile tables carry the same numbers), H100-80GB
// from nvidia-smi mig -lgip on an H100 SXM (9.75, 19.62, 39.50, 79.25 GiB). H200 and
// B200 use go-nvml's mock tables, which state the nominal sizes. Every other model is
// marked MemoryNominal: its figures are the sizes the names state until NVML's are known.

// sizes names the six profiles of an 8-slice GPU, as the "<n>gb" parts of 1g (one
// slice), 1g (two slices), 2g, 3g, 4g and 7g, and gives their memory in MiB.
type sizes struct {
	names [6]string
	mib   [6]resources.MiB
}

func a100x40() *MIGGeometry {
	return eightSlice(sizes{[6]string{"5gb", "10gb", "10gb", "20gb", "20gb", "40gb"},
		[6]resources.MiB{4864, 9856, 9856, 19968, 19968, 40192}}, false, "1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb")
}

func a100x80() *MIGGeometry {
	return eightSlice(sizes{[6]string{"10gb", "20gb", "20gb", "40gb", "40gb", "80gb"},
		[6]resources.MiB{9856, 19968, 19968, 40192, 40192, 80384}}, false, "1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb")
}

func h100x80() *MIGGeometry {
	return eightSlice(sizes{[6]string{"10gb", "20gb", "20gb", "40gb", "40gb", "80gb"},
		[6]resources.MiB{9984, 20096, 20096, 40448, 40448, 81152}}, false, "1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb")
}

func h100x94() *MIGGeometry {
	return nominal([6]string{"12gb", "24gb", "24gb", "47gb", "47gb", "94gb"}, "1g.12gb", "1g.12gb", "2g.24gb", "3g.47gb")
}

func h200() *MIGGeometry {
	return eightSlice(sizes{[6]string{"18gb", "35gb", "35gb", "71gb", "71gb", "141gb"},
		[6]resources.MiB{18432, 35840, 35840, 72704, 72704, 144384}}, true, "1g.18gb", "1g.18gb", "2g.35gb", "3g.71gb")
}

func hopper96() *MIGGeometry {
	return nominal([6]string{"12gb", "24gb", "24gb", "48gb", "48gb", "96gb"}, "1g.12gb", "1g.12gb", "2g.24gb", "3g.48gb")
}

func gh200x144() *MIGGeometry {
	return nominal([6]string{"18gb", "36gb", "36gb", "72gb", "72gb", "144gb"}, "1g.18gb", "1g.18gb", "2g.36gb", "3g.72gb")
}

func b200() *MIGGeometry {
	return eightSlice(sizes{[6]string{"23gb", "45gb", "45gb", "90gb", "90gb", "180gb"},
		[6]resources.MiB{23552, 46080, 46080, 92160, 92160, 184320}}, true, "1g.23gb", "1g.23gb", "2g.45gb", "3g.90gb")
}

func gb200() *MIGGeometry {
	return nominal([6]string{"23gb", "47gb", "47gb", "93gb", "93gb", "186gb"}, "1g.23gb", "1g.23gb", "2g.47gb", "3g.93gb")
}

func b300() *MIGGeometry {
	return nominal([6]string{"34gb", "67gb", "67gb", "135gb", "135gb", "269gb"}, "1g.34gb", "1g.34gb", "2g.67gb", "3g.135gb")
}

func gb300() *MIGGeometry {
	return nominal([6]string{"35gb", "70gb", "70gb", "139gb", "139gb", "278gb"}, "1g.35gb", "1g.35gb", "2g.70gb", "3g.139gb")
}

// nominal is an 8-slice geometry whose memory figures are the names' sizes.
func nominal(names [6]string, balanced ...string) *MIGGeometry {
	var s sizes
	s.names = names
	for i, n := range names {
		s.mib[i] = nameMiB(n)
	}
	return eightSlice(s, true, balanced...)
}

// eightSlice is the geometry of A100, Hopper and data-centre Blackwell GPUs: 8 memory
// and 7 compute slices.
func eightSlice(s sizes, nominalMemory bool, balanced ...string) *MIGGeometry {
	n, m := s.names, s.mib
	return &MIGGeometry{
		MemorySlices: 8, ComputeSlices: 7, Balanced: balanced, MemoryNominal: nominalMemory,
		Profiles: []Profile{
			profile("1g."+n[0], 1, 1, 7, m[0], 0, 1, 2, 3, 4, 5, 6),
			media(profile("1g."+n[0]+"+me", 1, 1, 1, m[0], 0, 1, 2, 3, 4, 5, 6)),
			profile("1g."+n[1], 1, 2, 4, m[1], 0, 2, 4, 6),
			profile("2g."+n[2], 2, 2, 3, m[2], 0, 2, 4),
			profile("3g."+n[3], 3, 4, 2, m[3], 0, 4),
			profile("4g."+n[4], 4, 4, 1, m[4], 0),
			profile("7g."+n[5], 7, 8, 1, m[5], 0),
		},
	}
}

// a30 is the A30-24GB geometry: 4 memory and 4 compute slices.
func a30() *MIGGeometry {
	return &MIGGeometry{
		MemorySlices: 4, ComputeSlices: 4, Balanced: []string{"1g.6gb", "1g.6gb", "2g.12gb"},
		Profiles: []Profile{
			profile("1g.6gb", 1, 1, 4, 5836, 0, 1, 2, 3),
			media(profile("1g.6gb+me", 1, 1, 1, 5836, 0, 1, 2, 3)),
			profile("2g.12gb", 2, 2, 2, 11672, 0, 2),
			media(profile("2g.12gb+me", 2, 2, 1, 11672, 0, 2)),
			profile("4g.24gb", 4, 4, 1, 23344, 0),
		},
	}
}

// rtxPro6000 is the RTX PRO 6000 Blackwell geometry: 4 memory and 4 compute slices, and
// the newer attribute variants: +gfx (graphics), -me (no media engines) and +me.all
// (every media engine, so the others on the GPU must be -me).
func rtxPro6000() *MIGGeometry {
	var ps []Profile
	for _, base := range []Profile{
		profile("1g.24gb", 1, 1, 4, gib(24), 0, 1, 2, 3),
		profile("2g.48gb", 2, 2, 2, gib(48), 0, 2),
	} {
		ps = append(ps, base, variant(base, "+gfx"), variant(base, "-me"), variant(base, "+me.all"))
	}
	full := profile("4g.96gb", 4, 4, 1, gib(96), 0)
	ps = append(ps, full, variant(full, "+gfx"))
	return &MIGGeometry{MemorySlices: 4, ComputeSlices: 4, Profiles: ps, MemoryNominal: true,
		Balanced: []string{"1g.24gb", "1g.24gb", "2g.48gb"}}
}

// variant derives an attribute variant of a profile: same slices and placement.
func variant(p Profile, attr string) Profile {
	p.Name += attr
	switch attr {
	case "+gfx":
		p.Graphics = true
	case "-me":
		p.NoMedia = true
	case "+me.all":
		p.AllMedia, p.MaxCount = true, 1
	}
	return p
}

func media(p Profile) Profile {
	p.MediaExtensions = true
	return p
}

func profile(name string, compute, memSlices, max int, mib resources.MiB, starts ...int) Profile {
	return Profile{
		Name:          name,
		ComputeSlices: compute,
		MemorySlices:  memSlices,
		MemoryMiB:     mib,
		Memory:        mib,
		Starts:        starts,
		MaxCount:      max,
	}
}

// nameMiB is the size a "<n>gb" name part states, in MiB ("47gb" -> 48128).
func nameMiB(s string) resources.MiB {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return gib(n)
}
