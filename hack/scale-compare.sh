#!/usr/bin/env bash
# hack/scale-compare.sh [NODES...] — times wmcon next to kubectl (and k9s when one is on PATH) on the same
# test cluster: the real kube-apiserver and etcd of testsupport/kubeapi on loopback, seeded by hack/scaleserver
# with NODES realistic nodes (default: 2000 and 10000; every fourth Windows; every address on loopback).
# RUNS rounds (default 5); each round runs every tool once, in an order rotated from round to round, and
# the medians are printed:
#   first   — the first node rows on screen (wmcon and k9s in a 200×50 tmux pane; kubectl prints all at once)
#   windows — every Windows node listed (wmcon: its notice says the Windows nodes are listed, or the whole
#             list is in; the others have no such moment: their full list)
#   full    — the whole list: the tab/title counts every node (kubectl: it has exited)
#   rss     — peak resident memory (/usr/bin/time -v)
#   idle    — in the first IDLE_RUNS rounds (default 1), the TUIs stay open IDLE seconds (default 60) after
#             the full list: requests they sent the API server in that time (its audit log, by user agent)
#             and the CPU they used (utime+stime from /proc), as requests/s and % of one core; the window
#             opens IDLE_DELAY seconds after the full list (default 0; 60 measures the console at rest)
# The load average is printed before each round. WMCON_FLAGS adds flags to wmcon's command line (it runs in
# colour, as a user's does; --no-color measures round 2's and 3's way), WMCON_ENV variables to its environment.
# Needs tmux, /usr/bin/time, and the test tier's binaries (make etcd kube-apiserver).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
IDLE=${IDLE:-60}
IDLE_DELAY=${IDLE_DELAY:-0} # seconds between the full list and the idle window (0: the minute right after the list)
IDLE_RUNS=${IDLE_RUNS:-1}
WMCON_FLAGS=${WMCON_FLAGS:-} # extra flags for wmcon, e.g. --prometheus URL or --no-color
WMCON_ENV=${WMCON_ENV:-}     # environment for wmcon alone, e.g. GOGC=50 (the others keep theirs)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2000 10000)

tmp=$(mktemp -d)
sock="wmcon-scale-$$"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	[ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for tool in tmux /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "scale-compare: $tool is needed" >&2; exit 1; }
done
hack/kube-build.sh etcd >/dev/null
hack/kube-build.sh kube-apiserver >/dev/null
echo "building wmcon (as make build does) and hack/scaleserver…" >&2
make -s build >&2
# Measured from a copy: a freshly linked binary sits in the page cache in large folios, which the kernel
# maps whole, so its RSS reads tens of MiB higher than the same bytes written by cp.
cp bin/wmcon "$tmp/wmcon"
go build -o "$tmp/scaleserver" ./hack/scaleserver
tools=(wmcon)
command -v kubectl >/dev/null && tools+=(kubectl) || echo "scale-compare: kubectl not on PATH, skipped" >&2
command -v k9s >/dev/null && tools+=(k9s) || echo "scale-compare: k9s not on PATH, skipped" >&2
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')); kubectl $(kubectl version --client 2>/dev/null | head -1 | awk '{print $3}'); k9s $(k9s version --short 2>/dev/null | awk '/Version/ {print $2}')" >&2

peak_rss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$1"; }
clk_tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; } # utime + stime

# idle_measure PATTERN AGENT waits IDLE seconds with the program whose command line matches PATTERN left
# open, and prints "requests/s cpu%": its requests in the audit log (user agent starting with AGENT) and its
# CPU over that time.
idle_measure() {
	local pattern=$1 agent=$2 pid before_lines after_ticks before_ticks reqs
	pid=$(pgrep -n -f "$pattern" || true)
	[ -n "$pid" ] || { echo "NA NA"; return; }
	sleep "$IDLE_DELAY"
	before_lines=$(wc -l <"$audit")
	before_ticks=$(cpu_ticks "$pid")
	sleep "$IDLE"
	after_ticks=$(cpu_ticks "$pid")
	reqs=$(tail -n +"$((before_lines + 1))" "$audit" | grep -c "\"userAgent\":\"$agent" || true)
	awk -v r="$reqs" -v t="$((after_ticks - before_ticks))" -v hz="$clk_tck" -v s="$IDLE" \
		'BEGIN {printf "%.2f %.2f", r / s, 100 * t / hz / s}'
}

# tui NAME ROWS_TEXT WINDOWS_TEXT FULL_TEXT IDLE? COMMAND... runs a full-screen program in a 200×50 tmux
# window and prints "first windows full rss req/s cpu%": milliseconds until the screen shows ROWS_TEXT, until
# it shows WINDOWS_TEXT or FULL_TEXT, until it shows FULL_TEXT, the peak RSS in MiB, and (IDLE=yes) the idle
# figures; the program is stopped with ctrl+c once measured. The clock is bash's own ($EPOCHREALTIME,
# microseconds) and the screen is matched in bash: a poll is one `tmux capture-pane`.
tui() {
	local name=$1 rows=$2 win=$3 full=$4 idle=$5
	shift 5
	local first="" windows="" whole="" start screen deadline t idlefig="- -"
	rm -f "$tmp/time.txt"
	start=${EPOCHREALTIME/./}
	local envs=()
	if [ "$name" = wmcon ]; then for e in $WMCON_ENV; do envs+=(-e "$e"); done; fi
	tmux -L "$sock" new-window -d -n "$name" "${envs[@]}" /usr/bin/time -v -o "$tmp/time.txt" "$@"
	deadline=$((start + 120000000))
	while t=${EPOCHREALTIME/./} && [ -z "$whole" ] && [ "$t" -lt "$deadline" ]; do
		screen=$(tmux -L "$sock" capture-pane -p -t "$name" 2>/dev/null || true)
		t=${EPOCHREALTIME/./}
		if [ -z "$first" ] && [[ $screen == *"$rows"* ]]; then first=$(((t - start) / 1000)); fi
		if [ -z "$windows" ] && [[ $screen == *"$win"* || $screen == *"$full"* ]]; then windows=$(((t - start) / 1000)); fi
		if [[ $screen == *"$full"* ]]; then whole=$(((t - start) / 1000)); fi
	done
	if [ -z "$whole" ]; then # say what was on screen instead, to fix a pattern that never matched
		echo "scale-compare: $name did not show \"$full\" within 120 s; its screen's first lines:" >&2
		head -3 <<<"$screen" >&2
	elif [ "$idle" = yes ]; then
		idlefig=$(idle_measure "$1" "$name")
	fi
	tmux -L "$sock" send-keys -t "$name" C-c 2>/dev/null || true
	while tmux -L "$sock" list-windows -F '#W' 2>/dev/null | grep -qx "$name"; do sleep 0.05; done
	echo "${first:-NA} ${windows:-NA} ${whole:-NA} $(peak_rss_mib "$tmp/time.txt") $idlefig"
}

# kubectl_run prints the same fields for kubectl get nodes (its table appears when the list is complete).
kubectl_run() {
	local start elapsed
	start=${EPOCHREALTIME/./}
	/usr/bin/time -v -o "$tmp/time.txt" kubectl --kubeconfig "$kubeconfig" get nodes >/dev/null
	elapsed=$(((${EPOCHREALTIME/./} - start) / 1000))
	echo "$elapsed $elapsed $elapsed $(peak_rss_mib "$tmp/time.txt") - -"
}

measure() {
	local tool=$1 n=$2 idle=$3
	case $tool in
	wmcon) tui wmcon "compute.internal" "Windows nodes listed" "Nodes ($n)" "$idle" "$tmp/wmcon" --kubeconfig "$kubeconfig" $WMCON_FLAGS ;;
	kubectl) kubectl_run ;;
	k9s) tui k9s "compute.internal" "[$(thousands "$n")]" "[$(thousands "$n")]" "$idle" k9s --kubeconfig "$kubeconfig" --command nodes --readonly --headless ;;
	esac
}

# thousands 10000 prints 10,000, as k9s writes its counts.
thousands() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"; }

median() { grep -v -e '^NA$' -e '^-$' | sort -n | awk '{v[NR]=$1} END {if (NR==0) print "-"; else print v[int((NR+1)/2)]}'; }

tmux -L "$sock" new-session -d -s keep -x 200 -y 50 # one server for all runs, sized like a big terminal
tmux -L "$sock" set-option -g default-size 200x50 >/dev/null 2>&1 || true
for n in "${sizes[@]}"; do
	echo "starting the test API server with $n realistic nodes…" >&2
	audit="$tmp/audit-$n.log"
	coproc SERVER { exec "$tmp/scaleserver" -nodes "$n" -audit "$audit"; }
	server_pid=$SERVER_PID
	kubeconfig=""
	while read -r line <&"${SERVER[0]}"; do
		case $line in KUBECONFIG=*) kubeconfig=${line#KUBECONFIG=}; break ;; esac
	done
	[ -n "$kubeconfig" ] || { echo "scale-compare: the test server did not start" >&2; exit 1; }
	: >"$tmp/results"
	for run in $(seq "$RUNS"); do
		idle=no
		[ "$run" -le "$IDLE_RUNS" ] && idle=yes
		# Rotate the order each round, so no tool always runs right after the server's caches warmed for another.
		order=()
		for i in "${!tools[@]}"; do order+=("${tools[$(((i + run - 1) % ${#tools[@]}))]}"); done
		echo "  $n nodes, round $run: load average $(cut -d' ' -f1-3 /proc/loadavg); order ${order[*]}" >&2
		for tool in "${order[@]}"; do
			echo "$tool $(measure "$tool" "$n" "$idle")" >>"$tmp/results"
			echo "    $(tail -1 "$tmp/results")" >&2
		done
	done
	server_in=${SERVER[1]}
	exec {server_in}>&- # closing its stdin stops the server
	wait "$server_pid" || true
	server_pid=""
	echo
	echo "$n realistic nodes, medians of $RUNS rounds (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
	printf '| %-8s | %11s | %14s | %10s | %9s | %13s | %10s |\n' tool "first rows" "Windows listed" "full list" "peak RSS" "idle requests" "idle CPU"
	printf '|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ------------- ---------------- ------------ ----------- --------------- ------------
	for tool in "${tools[@]}"; do
		col() { awk -v t="$tool" -v c="$1" '$1==t {print $c}' "$tmp/results" | median; }
		printf '| %-8s | %8s ms | %11s ms | %7s ms | %5s MiB | %11s/s | %8s %% |\n' "$tool" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)"
	done
done
