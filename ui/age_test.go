package ui

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-5 * time.Second, "0s"},
		{0, "0s"},
		{95 * time.Second, "95s"},
		{2 * time.Minute, "2m"},
		{7*time.Minute + 30*time.Second, "7m30s"},
		{12 * time.Minute, "12m"},
		{179 * time.Minute, "179m"},
		{3*time.Hour + 20*time.Minute, "3h20m"},
		{3 * time.Hour, "3h"},
		{12 * time.Hour, "12h"},
		{47 * time.Hour, "47h"},
		{3*day + 4*time.Hour, "3d4h"},
		{5 * day, "5d"},
		{120 * day, "120d"},
		{2*365*day + 30*day, "2y30d"},
		{9 * 365 * day, "9y"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, humanDuration(c.d), "duration %s", c.d)
	}
	assert.Equal(t, "-", formatAge(fixedNow, time.Time{}), "an unknown creation time")
}
