package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// intFloors are the lowest values of the int flags that have one, by name: a flag name means the same in
// every command that has it. (logs checks its --tail itself: it has a ceiling too.)
var intFloors = map[string]struct {
	min  int64
	what string
}{
	"grace-period":    {-1, "give the seconds each pod gets to terminate, or -1 for the pod's own terminationGracePeriodSeconds"},
	"concurrency":     {1, "at least one node at a time"},
	"max-unavailable": {1, "at least one node must be allowed at a time"},
	"replicas":        {0, "give 0 or more Machines"},
}

// checkFlagValues makes cmd's flags refuse, as they are parsed, a negative duration (every duration flag is
// a time to wait, a window or an interval) and an int below its floor (intFloors). The error is a flag
// error, so a usage error (64) before anything runs, naming the flag and the value.
func checkFlagValues(cmd *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if _, done := f.Value.(*checkedValue); done {
				return
			}
			switch f.Value.Type() {
			case "duration":
				f.Value = &checkedValue{Value: f.Value, check: nonNegativeDuration}
			case "int", "int32", "int64":
				if floor, ok := intFloors[f.Name]; ok {
					f.Value = &checkedValue{Value: f.Value, check: func(s string) error {
						if n, err := strconv.ParseInt(s, 0, 64); err == nil && n < floor.min {
							return fmt.Errorf("%d is below %d: %s", n, floor.min, floor.what)
						}
						return nil
					}}
				}
			}
		})
	}
}

// checkedValue is a flag value that checks what it is given first; a value its own type cannot parse is
// left to that type's error.
type checkedValue struct {
	pflag.Value
	check func(string) error
}

func (v *checkedValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	return v.Value.Set(s)
}

func nonNegativeDuration(s string) error {
	if d, err := time.ParseDuration(s); err == nil && d < 0 {
		return fmt.Errorf("a duration cannot be negative: give 0 or more, such as 30s or 5m")
	}
	return nil
}
