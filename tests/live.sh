# tests/live.sh - what live tests and live benchmarks share; source it (bash).
#   mem_find          BASE = this process's own memory cgroup dir, MOUNT = its hierarchy
#   tracing_save      remember the top-level tracing settings trace-cmd changes
#   tracing_restore   put them back (call after every trace-cmd recording)
#   tc_record OUT LOG [trace-cmd options...] -- COMMAND...
#                     record COMMAND with trace-cmd the way this kernel needs it (see
#                     tracing-stack notes: -d --no-filter -C mono -b 16384), in its own
#                     process group; whatever of that group survives is ended by its id.
#                     TC_REC and TC_REC_EV (options, events) can be made local to change them
# Needs: nothing at source time.  It never writes tracing settings by itself.

TR=/sys/kernel/tracing
TC_EVENTS=(memcg/mod_memcg_state memcg/mod_memcg_lruvec_state memcg/count_memcg_events
	memcg/memcg_flush_stats cgroup/cgroup_rstat_locked cgroup/cgroup_rstat_unlock
	cgroup/cgroup_mkdir cgroup/cgroup_rmdir)
TC_REC=(-d --no-filter -C mono -b 16384)
TC_REC_EV=(-e memcg -e cgroup:cgroup_rstat_locked -e cgroup:cgroup_rstat_unlock
	-e cgroup:cgroup_mkdir -e cgroup:cgroup_rmdir)
TC_PID=

# The v1 memory line of /proc/self/cgroup, else the v2 line with memory enabled.
mem_find() {
	local p m
	BASE= MOUNT=
	p=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
	if [ -n "$p" ] && [ -d "/sys/fs/cgroup/memory$p" ]; then
		MOUNT=/sys/fs/cgroup/memory BASE="$MOUNT${p%/}"
		return
	fi
	p=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	for m in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		if [ -n "$p" ] && grep -qw memory "$m/cgroup.controllers" 2>/dev/null &&
		   [ -d "$m$p" ]; then
			MOUNT=$m BASE="$m${p%/}"
			return
		fi
	done
}

# trace-cmd on such kernels leaves tracing_on, trace_clock, buffer_size_kb and
# event enables changed: save them once, restore after every recording.
tracing_save() {
	S_ON=$(cat $TR/tracing_on)
	S_CLK=$(sed -n 's/.*\[\([a-z0-9_-]*\)\].*/\1/p' $TR/trace_clock)
	S_BUF=$(awk '{ print ($2 == "(expanded:") ? $3 + 0 : $1 }' $TR/buffer_size_kb)
	S_FT=$(cat $TR/options/function-trace 2>/dev/null)
	S_EV=()
	local e
	for e in "${TC_EVENTS[@]}"; do S_EV+=("$(cat "$TR/events/$e/enable")"); done
}
tracing_restore() {
	local i
	for i in "${!TC_EVENTS[@]}"; do
		echo "${S_EV[$i]}" >"$TR/events/${TC_EVENTS[$i]}/enable" 2>/dev/null
	done
	echo "$S_BUF" >$TR/buffer_size_kb
	echo "$S_CLK" >$TR/trace_clock
	[ -n "$S_FT" ] && echo "$S_FT" >$TR/options/function-trace 2>/dev/null
	echo "$S_ON" >$TR/tracing_on
}

tc_record() {
	local out=$1 log=$2 opts=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	# options first: -B applies to the -e options that follow it
	setsid trace-cmd record "${TC_REC[@]}" -o "$out" "${opts[@]+"${opts[@]}"}" "${TC_REC_EV[@]}" \
		"$@" >"$log.out" 2>"$log.err" </dev/null &
	TC_PID=$!
	wait "$TC_PID"
	kill -- "-$TC_PID" 2>/dev/null
	TC_PID=
	tracing_restore
	[ -s "$out" ]
}
