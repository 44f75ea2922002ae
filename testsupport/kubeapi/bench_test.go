package kubeapi_test

import (
	"context"
	"testing"

	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// BenchmarkStart measures a full start (etcd, kube-apiserver, every CRD Established, namespaces) and stop:
// what a package pays once in TestMain, and each test that calls Start pays again.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), kubeapi.StartTimeout)
		s, err := kubeapi.StartMain(ctx)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		s.Stop()
	}
}

// BenchmarkRestartAPIServer measures how long clients see the API server gone in a restart test.
func BenchmarkRestartAPIServer(b *testing.B) {
	for b.Loop() {
		srv.RestartAPIServer(b)
	}
}
