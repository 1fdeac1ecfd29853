package migparted

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// checkProfileFormat accepts the shapes of NVIDIA's profile names: "<n>g.<m>gb", with an
// optional compute-instance prefix "<k>c." and an attribute suffix ("+me", ".me",
// "-me", "+gfx", "+me.all"). Whether the GPU has the profile is checked on Resolve.
func checkProfileFormat(name string) error {
	rest := name
	if c, after, ok := strings.Cut(rest, "c."); ok && digits(c) {
		rest = after
	}
	g, after, ok := strings.Cut(rest, "g.")
	if !ok || !digits(g) {
		return fmt.Errorf("malformed MIG profile %q: want <compute>g.<memory>gb, as in 1g.10gb or 1g.10gb+me", name)
	}
	mem, suffix, ok := strings.Cut(after, "gb")
	if !ok || !digits(mem) || !validSuffix(suffix) {
		return fmt.Errorf("malformed MIG profile %q: want <compute>g.<memory>gb, as in 1g.10gb or 1g.10gb+me", name)
	}
	return nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// validSuffix: empty, or a separator (+ . -) followed by lower-case words joined by dots.
func validSuffix(s string) bool {
	if s == "" {
		return true
	}
	if !strings.ContainsRune("+.-", rune(s[0])) || len(s) == 1 {
		return false
	}
	for _, word := range strings.Split(s[1:], ".") {
		if word == "" || strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") != "" {
			return false
		}
	}
	return true
}

// spellingKey folds the two spellings of attribute profiles together: mig-parted's
// files write "1g.10gb+me", Kubernetes names need "1g.10gb.me".
func spellingKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "+", "."))
}

// modelProfile finds the model's profile for a name written in either spelling.
func modelProfile(m devices.Model, name string) (devices.Profile, bool) {
	if p, ok := m.Profile(name); ok {
		return p, true
	}
	key := spellingKey(name)
	for _, n := range m.ProfileNames() {
		if spellingKey(n) == key {
			return m.Profile(n)
		}
	}
	return devices.Profile{}, false
}

// FileSpelling writes a catalog profile name the way mig-parted's files do ("+me").
func FileSpelling(profile string) string {
	head, tail, ok := cutAfterGB(profile)
	if !ok || tail == "" || tail[0] != '.' {
		return profile
	}
	return head + "+" + tail[1:]
}

// ConfigSpelling writes a profile name the way mig-parted's config names do
// ("all-1g.10gb.me"): no "+".
func ConfigSpelling(profile string) string { return strings.ReplaceAll(profile, "+", ".") }

// cutAfterGB splits "1g.10gb.me" into "1g.10gb" and ".me".
func cutAfterGB(s string) (string, string, bool) {
	i := strings.Index(s, "gb")
	if i < 0 {
		return s, "", false
	}
	return s[:i+2], s[i+2:], true
}
