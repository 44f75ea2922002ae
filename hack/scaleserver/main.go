// Command scaleserver runs the test tier's real kube-apiserver and etcd on loopback, seeded with a fleet
// of realistic nodes (sim/fleet: managedFields, 40–60 images, OpenShift's labels and annotations,
// every fourth node Windows, every address on loopback), for hack/scale-compare.sh. It prints the admin
// kubeconfig's path on a line "KUBECONFIG=<path>" once the nodes exist, then waits until stdin closes or it
// is signalled, and stops the servers (which also die with it). With -audit FILE the API server writes one
// JSON line per request to FILE (its audit log, metadata only), so the script can count a client's requests.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/sim/fleet"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func main() {
	nodes := flag.Int("nodes", 2000, "how many realistic nodes to create")
	audit := flag.String("audit", "", "write the API server's audit log (one JSON line per request) to this file")
	flag.Parse()
	if err := run(*nodes, *audit); err != nil {
		fmt.Fprintln(os.Stderr, "scaleserver:", err)
		os.Exit(1)
	}
}

func run(nodes int, audit string) error {
	ctx, cancel := context.WithTimeout(context.Background(), kubeapi.StartTimeout)
	var opts []kubeapi.Option
	if audit != "" {
		opts = append(opts, kubeapi.WithAuditLog(audit))
	}
	srv, err := kubeapi.StartMain(ctx, opts...)
	cancel()
	if err != nil {
		return err
	}
	defer srv.Stop()
	start := time.Now()
	if err := seed(srv, nodes); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scaleserver: %d nodes created in %s\n", nodes, time.Since(start).Round(time.Millisecond))
	fmt.Printf("KUBECONFIG=%s\n", srv.AdminKubeconfig())
	waitForEnd()
	return nil
}

// seed creates the fleet with a few concurrent writers (one at a time would take minutes at 10,000).
func seed(srv *kubeapi.Server, n int) error {
	kube, err := kubernetes.NewForConfig(srv.AdminConfig())
	if err != nil {
		return err
	}
	const workers = 8
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("ip-127-%d-%d-%d.us-east-2.compute.internal", i/65536, i/256%256, i%256)
				node := fleet.Node(i, name, fmt.Sprintf("127.%d.%d.%d", i/65536, i/256%256, i%256))
				if _, err := kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var first error
feed:
	for i := range n {
		select {
		case next <- i:
		case first = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && len(errs) > 0 {
		first = <-errs
	}
	return first
}

// waitForEnd returns when stdin closes or on SIGINT/SIGTERM.
func waitForEnd() {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done <- struct{}{}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
}
