package demo_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/sim/demo"
)

// TestNodeNamesAreTheDemosNodes: the names completion offers without starting the demo are the nodes a
// started demo has, by OS, plus the one that joins while you watch (before it has joined).
func TestNodeNamesAreTheDemosNodes(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		opts := demo.Options{Step: time.Hour, Fresh: fresh}
		if fresh {
			opts.BYOHKeyFile = filepath.Join(t.TempDir(), "byoh")
		}
		d, err := demo.New(opts)
		require.NoError(t, err)
		t.Cleanup(d.Close)
		list, err := d.Clients.Kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		var windows, linux []string
		for i := range list.Items {
			if n := cluster.NodeInfoFrom(&list.Items[i], ""); n.Windows {
				windows = append(windows, n.Name)
			} else {
				linux = append(linux, n.Name)
			}
		}
		for _, w := range d.Nodes {
			if w.Joining {
				windows = append(windows, demo.NodeName(w.IP))
			}
		}
		sort.Strings(windows)
		sort.Strings(linux)
		gotWindows, gotLinux := demo.NodeNames(fresh)
		assert.Equal(t, windows, gotWindows, "fresh=%v", fresh)
		assert.Equal(t, linux, gotLinux, "fresh=%v", fresh)
		assert.NotEmpty(t, gotLinux)
	}
}
