package cluster

import (
	"context"
	"fmt"
	"net"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
)

// FindBastion looks for the SSH bastion OpenShift's documentation deploys (a Service labelled
// run=ssh-bastion, usually a LoadBalancer) and returns its external "host:port".
func FindBastion(ctx context.Context, kube kubernetes.Interface) (string, bool, error) {
	svcs, err := kube.CoreV1().Services("").List(ctx, metav1.ListOptions{LabelSelector: config.BastionServiceLabel})
	if err != nil {
		return "", false, fmt.Errorf("look for an ssh-bastion Service: %w", err)
	}
	for _, svc := range svcs.Items {
		port := config.SSHPort
		for _, p := range svc.Spec.Ports {
			if p.Name == "ssh" || p.Port == int32(config.SSHPort) {
				port = int(p.Port)
			}
		}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			host := in.Hostname
			if host == "" {
				host = in.IP
			}
			if host != "" {
				return net.JoinHostPort(host, strconv.Itoa(port)), true, nil
			}
		}
	}
	return "", false, nil
}
