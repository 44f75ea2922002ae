package request

import "testing"

func TestUntilReadyNodesAgreesInNumber(t *testing.T) {
	for names, want := range map[string]string{
		"one": "demo-r5t8n is a Ready node",
		"two": "demo-r5t8n, 127.0.0.5 are Ready nodes",
	} {
		in := []string{"demo-r5t8n"}
		if names == "two" {
			in = append(in, "127.0.0.5")
		}
		if got := UntilReadyNodes(in); got != want {
			t.Errorf("%s: got %q, want %q", names, got, want)
		}
	}
}
