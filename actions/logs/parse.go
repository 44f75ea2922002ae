package logs

import (
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions/logline"
)

// Giving log lines their time and level, as the services write them.

// lineStamper gives lines their time and level, and applies --since. A line without a time of its own
// (a continuation, a stack trace) takes its predecessor's and is kept or dropped with it.
type lineStamper struct {
	now   func() time.Time
	since time.Duration
	last  time.Time
	keep  bool
	begun bool
}

func (s *lineStamper) stamp(text string) (logline.Line, bool) {
	t, level := ParseLogLine(text, s.now())
	if t.IsZero() {
		t = s.last
		if !s.begun {
			s.keep = s.keepTime(t)
		}
	} else {
		s.last, s.keep = t, s.keepTime(t)
	}
	s.begun = true
	return logline.Line{Time: t, Level: level, Text: text}, s.keep
}

func (s *lineStamper) keepTime(t time.Time) bool {
	return s.since <= 0 || t.IsZero() || !t.Before(s.now().Add(-s.since))
}

// rotated forgets the last time: the new file starts afresh.
func (s *lineStamper) rotated() { s.begun = false }

// ParseLogLine reads the time and level of a line as the services write them: klog
// ("E0102 15:04:05.000000 ..."; klog has no year or zone, so the host's local time in the current year
// is assumed), logrus/containerd (time="..." level=error) and go-kit/windows_exporter (ts=... level=warn),
// or an RFC 3339 time at the start. The zero time and LevelUnknown when the line has none.
func ParseLogLine(text string, now time.Time) (time.Time, logline.Level) {
	if t, l, ok := parseKlog(text, now); ok {
		return t, l
	}
	level := levelWord(fieldValue(text, "level="))
	for _, key := range []string{"time=", "ts="} {
		if v := fieldValue(text, key); v != "" {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t, level
			}
		}
	}
	first, _, _ := strings.Cut(text, " ")
	if t, err := time.Parse(time.RFC3339Nano, first); err == nil {
		return t, level
	}
	return time.Time{}, level
}

// parseKlog reads "Lmmdd hh:mm:ss.uuuuuu".
func parseKlog(text string, now time.Time) (time.Time, logline.Level, bool) {
	if len(text) < 21 || !strings.ContainsRune("IWEF", rune(text[0])) || text[5] != ' ' {
		return time.Time{}, "", false
	}
	t, err := time.ParseInLocation("0102 15:04:05.000000", text[1:21], now.Location())
	if err != nil {
		return time.Time{}, "", false
	}
	t = t.AddDate(now.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) { // a December line read in January
		t = t.AddDate(-1, 0, 0)
	}
	return t, logline.Level(text[:1]), true
}

// fieldValue returns the value of key (with its "=") in a logfmt line, unquoted.
func fieldValue(text, key string) string {
	i := strings.Index(text, key)
	if i < 0 || (i > 0 && text[i-1] != ' ') {
		return ""
	}
	v := text[i+len(key):]
	if strings.HasPrefix(v, `"`) {
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return ""
		}
		return v[1 : end+1]
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

func levelWord(w string) logline.Level {
	switch strings.ToLower(w) {
	case "info", "debug", "trace":
		return logline.LevelInfo
	case "warn", "warning":
		return logline.LevelWarning
	case "error", "err":
		return logline.LevelError
	case "fatal", "panic", "crit", "critical":
		return logline.LevelFatal
	}
	return logline.LevelUnknown
}
