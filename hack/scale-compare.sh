#!/usr/bin/env bash
# hack/scale-compare.sh [NODES...] — times wmcon next to kubectl (and k9s when one is on PATH) on the same
# test cluster: the real kube-apiserver and etcd of testsupport/kubeapi on loopback, seeded by hack/scaleserver
# with NODES realistic nodes (default: 2000 and 10000). Runs are interleaved (wmcon, kubectl, k9s, wmcon, ...),
# RUNS of each (default 5), and the medians are printed:
#   first  — the first node rows on screen (wmcon and k9s in a 200×50 tmux pane; kubectl prints all at once)
#   full   — the whole list: the tab/title counts every node (kubectl: it has exited)
#   rss    — peak resident memory (/usr/bin/time -v)
# WMCON_FLAGS adds flags to wmcon's command line. Needs tmux, /usr/bin/time, etcd (make deps) and .cache/bin/kube-apiserver (make kube-apiserver).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
WMCON_FLAGS=${WMCON_FLAGS:-} # extra flags for wmcon, e.g. --prometheus URL
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
echo "building wmcon (as make build does) and hack/scaleserver…" >&2
make -s build >&2
# Measured from a copy: a freshly linked binary sits in the page cache in large folios, which the kernel
# maps whole, so its RSS reads tens of MiB higher than the same bytes written by cp.
cp bin/wmcon "$tmp/wmcon"
go build -o "$tmp/scaleserver" ./hack/scaleserver
tools=(wmcon)
command -v kubectl >/dev/null && tools+=(kubectl) || echo "scale-compare: kubectl not on PATH, skipped" >&2
command -v k9s >/dev/null && tools+=(k9s) || echo "scale-compare: k9s not on PATH, skipped" >&2

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
peak_rss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$1"; }

# tui NAME ROWS_TEXT FULL_TEXT COMMAND... runs a full-screen program in a 200×50 tmux window and prints
# "first full rss": milliseconds until the screen shows ROWS_TEXT, until it shows FULL_TEXT, and the peak
# RSS in MiB; the program is stopped with ctrl+c once the full list is on screen. The clock is bash's own
# ($EPOCHREALTIME, microseconds) and the screen is matched in bash: a poll is one `tmux capture-pane`
# (with date and grep a poll took 60–100 ms on this machine, which the first-rows figure then included).
tui() {
	local name=$1 rows=$2 full=$3
	shift 3
	local first="" whole="" start screen deadline t
	rm -f "$tmp/time.txt"
	start=${EPOCHREALTIME/./}
	tmux -L "$sock" new-window -d -n "$name" /usr/bin/time -v -o "$tmp/time.txt" "$@"
	deadline=$((start + 120000000))
	while t=${EPOCHREALTIME/./} && [ -z "$whole" ] && [ "$t" -lt "$deadline" ]; do
		screen=$(tmux -L "$sock" capture-pane -p -t "$name" 2>/dev/null || true)
		t=${EPOCHREALTIME/./}
		if [ -z "$first" ] && [[ $screen == *"$rows"* ]]; then first=$(((t - start) / 1000)); fi
		if [[ $screen == *"$full"* ]]; then whole=$(((t - start) / 1000)); fi
	done
	if [ -z "$whole" ]; then # say what was on screen instead, to fix a pattern that never matched
		echo "scale-compare: $name did not show \"$full\" within 120 s; its screen's first lines:" >&2
		head -3 <<<"$screen" >&2
	fi
	tmux -L "$sock" send-keys -t "$name" C-c 2>/dev/null || true
	while tmux -L "$sock" list-windows -F '#W' 2>/dev/null | grep -qx "$name"; do sleep 0.05; done
	echo "${first:-NA} ${whole:-NA} $(peak_rss_mib "$tmp/time.txt")"
}

# kubectl_run prints "first full rss" for kubectl get nodes (its table appears when the list is complete).
kubectl_run() {
	local start elapsed
	start=$(now)
	/usr/bin/time -v -o "$tmp/time.txt" kubectl --kubeconfig "$kubeconfig" get nodes >/dev/null
	elapsed=$(ms "$start" "$(now)")
	echo "$elapsed $elapsed $(peak_rss_mib "$tmp/time.txt")"
}

measure() {
	local tool=$1 n=$2
	case $tool in
	wmcon) tui wmcon "compute.internal" "Nodes ($n)" "$tmp/wmcon" --kubeconfig "$kubeconfig" --no-color $WMCON_FLAGS ;;
	kubectl) kubectl_run ;;
	k9s) tui k9s "compute.internal" "[$(thousands "$n")]" k9s --kubeconfig "$kubeconfig" --command nodes --readonly --headless ;;
	esac
}

# thousands 10000 prints 10,000, as k9s writes its counts.
thousands() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"; }

median() { sort -n | awk '{v[NR]=$1} END {if (NR==0 || v[1]=="NA") print "NA"; else print v[int((NR+1)/2)]}'; }

tmux -L "$sock" new-session -d -s keep -x 200 -y 50 # one server for all runs, sized like a big terminal
tmux -L "$sock" set-option -g default-size 200x50 >/dev/null 2>&1 || true
for n in "${sizes[@]}"; do
	echo "starting the test API server with $n realistic nodes…" >&2
	coproc SERVER { exec "$tmp/scaleserver" -nodes "$n"; }
	server_pid=$SERVER_PID
	kubeconfig=""
	while read -r line <&"${SERVER[0]}"; do
		case $line in KUBECONFIG=*) kubeconfig=${line#KUBECONFIG=}; break ;; esac
	done
	[ -n "$kubeconfig" ] || { echo "scale-compare: the test server did not start" >&2; exit 1; }
	: >"$tmp/results"
	for run in $(seq "$RUNS"); do
		for tool in "${tools[@]}"; do
			echo "$tool $(measure "$tool" "$n")" >>"$tmp/results"
			echo "  $n nodes, run $run: $(tail -1 "$tmp/results")" >&2
		done
	done
	server_in=${SERVER[1]}
	exec {server_in}>&- # closing its stdin stops the server
	wait "$server_pid" || true
	server_pid=""
	echo
	echo "$n realistic nodes, medians of $RUNS interleaved runs"
	printf '| %-8s | %15s | %14s | %14s |\n' tool "first rows (ms)" "full list (ms)" "peak RSS (MiB)"
	printf '|%s|%s|%s|%s|\n' ---------- ----------------- ---------------- ----------------
	for tool in "${tools[@]}"; do
		printf '| %-8s | %15s | %14s | %14s |\n' "$tool" \
			"$(awk -v t="$tool" '$1==t {print $2}' "$tmp/results" | median)" \
			"$(awk -v t="$tool" '$1==t {print $3}' "$tmp/results" | median)" \
			"$(awk -v t="$tool" '$1==t {print $4}' "$tmp/results" | median)"
	done
done
