package logs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/actions/logs"
)

func TestParseLogLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		text  string
		time  time.Time
		level logline.Level
	}{
		{`E0102 11:04:05.123456    4321 kubelet.go:1] "boom"`, time.Date(2026, 1, 2, 11, 4, 5, 123456000, time.Local), logline.LevelError},
		{`W1231 23:59:59.000000    1 x.go:1] late`, time.Date(2025, 12, 31, 23, 59, 59, 0, time.Local), logline.LevelWarning},
		{`time="2026-01-02T10:00:00.5Z" level=error msg="pull failed"`, time.Date(2026, 1, 2, 10, 0, 0, 500000000, time.UTC), logline.LevelError},
		{`ts=2026-01-02T10:00:00Z level=warn msg=slow`, time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), logline.LevelWarning},
		{`2026-01-02T10:00:00Z Information The kubelet service entered the running state.`, time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), logline.LevelUnknown},
		{`    goroutine 1 [running]:`, time.Time{}, logline.LevelUnknown},
	} {
		got, level := logs.ParseLogLine(tc.text, now)
		require.True(t, tc.time.Equal(got), "%s: got %v want %v", tc.text, got, tc.time)
		require.Equal(t, tc.level, level, tc.text)
	}
}
