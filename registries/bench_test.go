package registries

import (
	"fmt"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

// BenchmarkRender500Entries renders 500 mirror entries (250 digest, 250 tag; 50 source registries, two
// mirrors each, every mirror host with credentials in the pull secret).
func BenchmarkRender500Entries(b *testing.B) {
	var in Input
	auths := map[string]string{}
	for i := 0; i < 250; i++ {
		src := fmt.Sprintf("registry%d.example.com/team%d/app", i%50, i)
		in.DigestMirrorSets = append(in.DigestMirrorSets, idms(fmt.Sprintf("d%03d", i),
			digest(src, "", fmt.Sprintf("mirror%d.corp/cache/team%d/app", i%7, i), fmt.Sprintf("backup.corp/team%d/app", i))))
		in.TagMirrorSets = append(in.TagMirrorSets, itms(fmt.Sprintf("t%03d", i),
			tag(src, configv1.NeverContactSource, fmt.Sprintf("mirror%d.corp/cache/team%d/app", i%7, i))))
		auths[fmt.Sprintf("mirror%d.corp", i%7)] = "robot:pw"
	}
	in.PullSecret = pullSecret(auths)
	b.ReportAllocs()
	for b.Loop() {
		tree, err := Render(in)
		if err != nil || len(tree.Files) != 50 {
			b.Fatalf("render: %d files, %v", len(tree.Files), err)
		}
	}
}
