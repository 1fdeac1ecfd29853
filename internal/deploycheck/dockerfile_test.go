package deploycheck

import (
	"os"
	"strings"
	"testing"
)

// stage is one FROM ... AS <name> of the Dockerfile with its instructions.
type stage struct {
	base  string
	lines []string // instructions, continuation lines joined
}

// dockerStages reads the Dockerfile's stages by name; no daemon is needed to check what
// each final image is made of.
func dockerStages(t *testing.T) map[string]*stage {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]*stage{}
	var cur *stage
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if strings.EqualFold(f[0], "FROM") {
			if len(f) < 4 || !strings.EqualFold(f[len(f)-2], "AS") {
				t.Fatalf("Dockerfile: %q: every stage needs a name", line)
			}
			cur = &stage{base: f[len(f)-3]}
			stages[f[len(f)-1]] = cur
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, strings.Join(f, " "))
		}
	}
	return stages
}

func (s *stage) has(prefix string) bool {
	for _, l := range s.lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestDockerfileTargets(t *testing.T) {
	stages := dockerStages(t)
	for _, tc := range []struct {
		target, base, from, cgo, user, entrypoint string
	}{
		{"controller", "gcr.io/distroless/static-debian12:nonroot", "build-controller", "CGO_ENABLED=0", "USER 65532:65532", `ENTRYPOINT ["/gantry", "controller"]`},
		{"node-agent", "gcr.io/distroless/base-debian12", "build-node-agent", "CGO_ENABLED=1", "USER 0:0", `ENTRYPOINT ["/gantry", "node-agent"]`},
	} {
		s, ok := stages[tc.target]
		if !ok {
			t.Fatalf("no %s target", tc.target)
		}
		if s.base != tc.base || !s.has("COPY --from="+tc.from+" /out/gantry /gantry") || !s.has(tc.user) || !s.has(tc.entrypoint) {
			t.Errorf("%s: base %s, instructions %q; want %s, the binary of %s at /gantry, %s, %s",
				tc.target, s.base, s.lines, tc.base, tc.from, tc.user, tc.entrypoint)
		}
		build, ok := stages[tc.from]
		if !ok || !build.has("RUN") || !strings.Contains(strings.Join(build.lines, "\n"), tc.cgo+" ") {
			t.Errorf("%s: build stage %s missing or not built with %s", tc.target, tc.from, tc.cgo)
		}
	}
	if last := lastStage(t); last != "controller" {
		t.Errorf("last stage %s: a plain docker build should give the controller", last)
	}
}

func lastStage(t *testing.T) string {
	data, _ := os.ReadFile("../../Dockerfile")
	var last string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "FROM" {
			last = f[len(f)-1]
		}
	}
	return last
}

// TestDockerignoreKeepsTheSources: the build context keeps what go build reads.
func TestDockerignoreKeepsTheSources(t *testing.T) {
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var ignored []string
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			ignored = append(ignored, strings.Trim(l, "/"))
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd", "internal", "pkg"} {
		for _, ig := range ignored {
			if ig == need || ig == "*" || ig == "**" {
				t.Errorf(".dockerignore drops %s, which the build needs", need)
			}
		}
	}
}
