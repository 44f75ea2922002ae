package model

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBYOHProblemNamesItsEntry(t *testing.T) {
	p := BYOHProblem("win1.example.com", errors.New(`the value must be username=<name>, found "x: y"`))
	assert.Equal(t, `windows-instances entry "win1.example.com": the value must be username=<name>, found "x: y"`, p)
	addr, problem, ok := ParseBYOHProblem(p)
	assert.True(t, ok)
	assert.Equal(t, "win1.example.com", addr)
	assert.Equal(t, `the value must be username=<name>, found "x: y"`, problem)
	_, _, ok = ParseBYOHProblem("something else")
	assert.False(t, ok)

	s := &Snapshot{Cluster: ClusterInfo{WMCOVersion: "11.0.1"}, BYOH: []BYOHInstance{{Address: "127.0.0.9", User: "Administrator"}},
		BYOHProblems: []string{p, BYOHProblem("127.0.0.10", errors.New("bad"))}}
	st, ok := s.BYOHStall()
	assert.True(t, ok)
	assert.Equal(t, BYOHStallInfo{Entry: "win1.example.com", Problem: `the value must be username=<name>, found "x: y"`, More: 1, Hosts: 3,
		Fix: "wmcon byoh remove win1.example.com"}, st)
	s.Cluster.WMCOVersion = ""
	_, ok = s.BYOHStall()
	assert.False(t, ok, "standalone: wmcon configures each host itself")
}
