package rollout

import (
	"context"
	"errors"
	"sync"
)

// DefaultConcurrency is how many nodes a fleet operation (pushing mirrors or the proxy, reading their
// state) works on at once by default: pushing a few small files is network-bound, so many at once costs
// the nodes nothing.
const DefaultConcurrency = 16

// Concurrency is the bound n asks for: 0 (or less) means DefaultConcurrency.
func Concurrency(n int) int {
	if n <= 0 {
		return DefaultConcurrency
	}
	return n
}

// ForEach runs f for 0..n-1 with at most concurrency at once (0 = DefaultConcurrency), in order of index;
// it returns when every started call has. The reads of many nodes' state share it.
func ForEach(ctx context.Context, n, concurrency int, f func(i int)) {
	slots := make(chan struct{}, Concurrency(concurrency))
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			f(i)
		}()
	}
	wg.Wait()
}

// Each runs f for every target, one after another, and joins the failures: for operations where one
// target does not depend on another (cordoning, restarting a service), so every target is tried.
func Each(targets []string, f func(string) error) error {
	var errs []error
	for _, t := range targets {
		errs = append(errs, f(t))
	}
	return errors.Join(errs...)
}
