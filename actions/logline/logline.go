// Package logline is the vocabulary of service logs shared by the log streams (package actions/logs), the
// log view and the headless printer: a line, its level and source, what to show, and the bounded buffer a
// view keeps. It imports neither client-go nor SSH nor Bubble Tea.
package logline

import (
	"time"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// Level is a line's severity as klog writes it (I, W, E, F); "" when the line does not say.
type Level string

const (
	LevelInfo    Level = "I"
	LevelWarning Level = "W"
	LevelError   Level = "E"
	LevelFatal   Level = "F"
	LevelUnknown Level = ""
)

// Source is where log lines come from.
type Source string

const (
	SourceAuto Source = ""    // the node proxy when allowed, SSH otherwise
	SourceAPI  Source = "api" // the API server's node log proxy (no SSH needed)
	SourceSSH  Source = "ssh" // the host over SSH
)

// EventLogService is the pseudo-service of the Windows event log (Service Control Manager events of the
// services, Get-WinEvent); "events:<service>" keeps one service's events. Only reachable over SSH.
const EventLogService = "events"

// Line is one line of a service's log on a node.
type Line struct {
	Time    time.Time `json:"time,omitzero"` // from the line (klog, containerd, ...); a line without one takes its predecessor's
	Node    string    `json:"node"`
	Service string    `json:"service"`
	Source  Source    `json:"source"`
	Text    string    `json:"text"`
	Level   Level     `json:"level,omitempty"`
	Seq     uint64    `json:"seq"` // order of delivery in the stream, from 1
}

// Request says which logs to show.
type Request struct {
	Nodes   []model.NodeInfo
	Service string        // a WMCO service (default kubelet), "wicd", or EventLogService[:service]
	Follow  bool          // keep delivering new lines until the context ends
	Tail    int           // existing lines per node to start with; < 0 = all
	Since   time.Duration // only lines newer than this (0 = no limit)
	Via     Source        // SourceAuto, SourceAPI or SourceSSH
}

// Services are the names the log view cycles through: the WMCO services with a log file, then the
// event log.
func Services() []string {
	var out []string
	for _, s := range config.Services {
		if s.LogFile != "" {
			out = append(out, s.Name)
		}
	}
	return append(out, EventLogService)
}
