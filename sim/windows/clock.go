package windows

import "errors"

// runGetDate is Get-Date: the host's clock (Options.Clock, which a test may set ahead or behind to play a
// host whose time drifted). Only the round-trip format is simulated: it is the one wmcon reads.
func runGetDate(p *pipeline, a *boundArgs, emit emitFn) error {
	now := p.s.h.now()
	format, ok := a.str("format")
	if !ok {
		return emit(now)
	}
	if format != "o" && format != "O" {
		p.reportBindError([]token{{text: "Get-Date"}}, errors.New("winsim only simulates Get-Date -Format o"))
		return nil
	}
	return emit(roundTrip(now))
}
