package ui

import (
	"fmt"
	"time"
)

// formatAge renders how long ago t was the way `kubectl get` does: precise while recent, coarser as it
// gets older (95s, 7m30s, 45m, 3h20m, 12h, 3d4h, 120d, 2y30d, 9y).
func formatAge(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return humanDuration(now.Sub(t))
}

func humanDuration(d time.Duration) string {
	if d < 0 {
		return "0s" // clock skew between the API server and us
	}
	seconds := int(d / time.Second)
	minutes := int(d / time.Minute)
	hours := int(d / time.Hour)
	days := hours / 24
	switch {
	case seconds < 120:
		return fmt.Sprintf("%ds", seconds)
	case minutes < 10:
		return withRemainder(minutes, "m", seconds%60, "s")
	case minutes < 180:
		return fmt.Sprintf("%dm", minutes)
	case hours < 8:
		return withRemainder(hours, "h", minutes%60, "m")
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		return withRemainder(days, "d", hours%24, "h")
	case days < 365*2:
		return fmt.Sprintf("%dd", days)
	case days < 365*8:
		return withRemainder(days/365, "y", days%365, "d")
	}
	return fmt.Sprintf("%dy", days/365)
}

func withRemainder(whole int, unit string, rest int, restUnit string) string {
	if rest == 0 {
		return fmt.Sprintf("%d%s", whole, unit)
	}
	return fmt.Sprintf("%d%s%d%s", whole, unit, rest, restUnit)
}
