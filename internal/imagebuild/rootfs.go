package imagebuild

import "os"

// NonRoot is distroless's unprivileged user and group.
const NonRoot = 65532

// baseEntries is what distroless/static holds besides certificates: the root and
// nonroot accounts (so user lookups by name work), their homes and a world-writable
// /tmp.
func baseEntries() []entry {
	return []entry{
		{path: "/etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		dir("/root", 0o700, 0),
		dir("/home/nonroot", 0o700, NonRoot),
		dir("/tmp", os.ModeSticky|0o777, 0),
	}
}

// libraryEntries places the resolved libraries (and the loader) at their paths.
func libraryEntries(files []File) []entry {
	out := make([]entry, len(files))
	for i, f := range files {
		out[i] = entry{path: f.Path, mode: 0o755, source: f.Source}
	}
	return out
}
