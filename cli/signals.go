package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/wmcon/wmcon/actions/event"
)

// interrupts handles SIGINT and SIGTERM. signal.NotifyContext alone swallows them for code that does not
// watch its context (a credential plugin that hangs, a blocking read), leaving a process only SIGKILL ends.
// So: while an action that stops on cancellation runs, the first signal cancels it (it then reports how it
// left each node); any other signal, or a first one when nothing would notice the cancellation, exits at
// once.
type interrupts struct {
	cancel context.CancelCauseFunc // with an *event.Interrupt: actions report the signal
	stderr io.Writer
	exit   func(code int) // os.Exit

	mu      sync.Mutex
	running int  // actions in progress that stop when the context is cancelled
	acted   bool // an action started: exiting at once may leave a node half-done
	got     int  // signals received
}

type interruptsKey struct{}

func withInterrupts(ctx context.Context, in *interrupts) context.Context {
	return context.WithValue(ctx, interruptsKey{}, in)
}

// cancellable runs f, which stops when ctx is cancelled, so that a first signal cancels it instead of
// exiting at once. Without an interrupts handler in ctx (tests calling the commands) it just runs f.
func cancellable(ctx context.Context, f func() error) error {
	in, _ := ctx.Value(interruptsKey{}).(*interrupts)
	if in == nil {
		return f()
	}
	in.mu.Lock()
	in.running++
	in.acted = true
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		in.running--
		in.mu.Unlock()
	}()
	return f()
}

// listen starts handling the signals; the returned function stops it. SIGHUP (the terminal went away) is
// handled as SIGTERM, unless the process was started with it ignored (nohup), which is left so.
func (in *interrupts) listen() (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(ch, syscall.SIGHUP)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				in.handle(sig)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

func (in *interrupts) handle(sig os.Signal) {
	in.mu.Lock()
	in.got++
	first, running, acted := in.got == 1, in.running > 0, in.acted
	in.mu.Unlock()
	name := signalName(sig)
	switch {
	case first && running:
		fmt.Fprintf(in.stderr, "wmcon: %s: stopping; the output says how each node was left (%s again exits at once)\n", name, name)
		in.cancel(&event.Interrupt{Word: name, Signal: unixName(sig)})
	case acted:
		fmt.Fprintf(in.stderr, "wmcon: %s again: exiting at once; an action was stopped mid-way and may have left a node half-done: check with wmcon triage NODE or the console\n", name)
		in.exit(ExitHalfDone)
	default:
		fmt.Fprintf(in.stderr, "wmcon: %s: exiting; nothing was changed\n", name)
		in.exit(ExitCancelled)
	}
}

// unixName is the signal's name as kill(1) spells it.
func unixName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "SIGINT"
	}
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return sig.String()
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGHUP:
		return "hung up"
	}
	return "terminated"
}
