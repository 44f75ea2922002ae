package setup

import (
	"context"
	"errors"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// What an SSH check of a BYOH host found.
const (
	ReachOK          = "ok"
	ReachUnreachable = "unreachable" // nothing answers SSH at the address
	ReachHostKey     = "host-key"    // the host's key is not the one pinned for it
	ReachLogin       = "login"       // the user cannot log in with the cloud-private-key
	ReachError       = "error"       // anything else (the message says)
)

// BYOHReach is whether one BYOH host lets wmcon (and so WMCO, which logs in with the same key and user) in.
type BYOHReach struct {
	Address string `json:"address"`
	User    string `json:"user"`
	State   string `json:"state"`
	Detail  string `json:"detail"` // the name the host gives itself when it answered, else why not
}

// CheckBYOHReach logs in to every BYOH host at once (bounded) and asks its name: the cheapest proof that
// the address answers SSH, the host key is the one pinned, and the user may log in with the key. It changes
// nothing on the hosts.
func CheckBYOHReach(ctx context.Context, hostAt actions.HostAt, hosts []model.BYOHInstance) []BYOHReach {
	out := make([]BYOHReach, len(hosts))
	rollout.ForEach(ctx, len(hosts), 0, func(i int) {
		h := hosts[i]
		out[i] = BYOHReach{Address: h.Address, User: h.User}
		name, err := hostName(ctx, hostAt, h)
		out[i].State, out[i].Detail = reachState(err), name
		if err != nil {
			out[i].Detail = err.Error()
		}
	})
	return out
}

func hostName(ctx context.Context, hostAt actions.HostAt, h model.BYOHInstance) (string, error) {
	host, err := hostAt(ctx, h.Address, h.User)
	if err != nil {
		return "", err
	}
	return host.Hostname(ctx)
}

func reachState(err error) string {
	var unreachable *remote.UnreachableError
	var mismatch *remote.HostKeyMismatchError
	var auth *remote.AuthError
	switch {
	case err == nil:
		return ReachOK
	case errors.As(err, &unreachable):
		return ReachUnreachable
	case errors.As(err, &mismatch):
		return ReachHostKey
	case errors.As(err, &auth):
		return ReachLogin
	}
	return ReachError
}
