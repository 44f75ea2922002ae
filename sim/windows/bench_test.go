package windows

import "testing"

// BenchmarkRoundTrip measures one exec over an established connection: what each client command costs.
func BenchmarkRoundTrip(b *testing.B) {
	th := startHost(b, Options{})
	c := th.dial(b)
	for b.Loop() {
		if r := run(b, c, `Test-Path -LiteralPath 'C:\Windows'`); r.code != 0 {
			b.Fatal(r.stderr)
		}
	}
}

// BenchmarkTokenize measures the parser on a typical joined command line.
func BenchmarkTokenize(b *testing.B) {
	line := `Get-Service -Name 'containerd','kubelet','kube-proxy' -ErrorAction SilentlyContinue | ForEach-Object { $_.Name + '=' + $_.Status }; sc.exe qc 'kubelet'`
	for b.Loop() {
		if _, err := parseScript(line); err != nil {
			b.Fatal(err)
		}
	}
}
