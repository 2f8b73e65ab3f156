#!/bin/sh
# log-telemetry.sh: the evolve loops' telemetry call, kept local.
#
#   scripts/log-telemetry.sh SKILL EVENT [KEY=VALUE ...]
#
# (the seeds: `log-telemetry.sh evolve cycle-complete cycle=N score=S ...`)
# appends one JSON line to .agents/evolve/telemetry.jsonl at the top of the
# working tree: {"timestamp":…,"skill":…,"event":…,"KEY":VALUE,…}, a value
# of digits as a number, anything else as a string. The file is local: it
# is listed in the repository's info/exclude, never committed, never read by
# git-evolve (the ledger, refs/notes/evolve, is the record of the cycles),
# and it keeps its last 10000 lines.
#
# It never fails its caller (seed 000 calls it without `|| true`): what it
# cannot use (no skill or event, an argument that is not KEY=VALUE, a key
# that is no name) is said on stderr and left out, and it exits 0.
# Bounded: 64 pairs, keys of 64 characters, values of 1024.

warn() { printf 'log-telemetry: warning: %s\n' "$*" >&2; }

if [ $# -lt 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
	warn "usage: log-telemetry.sh SKILL EVENT [KEY=VALUE ...]; nothing logged"
	exit 0
fi
top=$(git rev-parse --show-toplevel 2>/dev/null) || {
	warn "not in a git working tree; nothing logged"
	exit 0
}
dir="$top/.agents/evolve"
file="$dir/telemetry.jsonl"
mkdir -p "$dir" 2>/dev/null || {
	warn "cannot make $dir; nothing logged"
	exit 0
}
# Local: out of git, as the loop's other files under .agents/evolve/ are.
exclude=$(git rev-parse --git-path info/exclude 2>/dev/null)
if [ -n "$exclude" ] && ! grep -qxF '/.agents/evolve/telemetry.jsonl' "$exclude" 2>/dev/null; then
	mkdir -p "$(dirname "$exclude")" 2>/dev/null
	printf '/.agents/evolve/telemetry.jsonl\n' >>"$exclude" 2>/dev/null
fi

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
line=$(LC_ALL=C awk -v now="$now" '
function str(s) {
	s = substr(s, 1, 1024)
	gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s)
	gsub(/\t/, "\\t", s); gsub(/\r/, "\\r", s); gsub(/\n/, "\\n", s)
	gsub(/[\001-\037\177]/, "?", s)
	return "\"" s "\""
}
function val(s) {
	if (s ~ /^-?[0-9]+$/ && length(s) <= 15 && s !~ /^-?0[0-9]/) return s
	return str(s)
}
BEGIN {
	out = "{\"timestamp\":" str(now) ",\"skill\":" str(ARGV[1]) ",\"event\":" str(ARGV[2])
	seen["timestamp"] = seen["skill"] = seen["event"] = 1
	n = 0
	for (i = 3; i < ARGC; i++) {
		a = ARGV[i]
		k = index(a, "=")
		if (k == 0) { printf "log-telemetry: warning: %s is not KEY=VALUE; left out\n", substr(a, 1, 64) > "/dev/stderr"; continue }
		key = substr(a, 1, k - 1)
		if (key !~ /^[A-Za-z_][A-Za-z0-9_.-]*$/ || length(key) > 64) { printf "log-telemetry: warning: %s is not a key; left out\n", substr(key, 1, 64) > "/dev/stderr"; continue }
		if (key in seen) { printf "log-telemetry: warning: %s given twice or reserved; left out\n", key > "/dev/stderr"; continue }
		if (++n > 64) { print "log-telemetry: warning: more than 64 pairs; the rest left out" > "/dev/stderr"; break }
		seen[key] = 1
		out = out "," str(key) ":" val(substr(a, k + 1))
	}
	print out "}"
	exit
}' "$@")
if [ -z "$line" ]; then
	warn "nothing logged"
	exit 0
fi
# Whatever bytes the arguments held, the line is valid UTF-8.
if command -v iconv >/dev/null 2>&1; then
	line=$(printf '%s\n' "$line" | iconv -c -f UTF-8 -t UTF-8 2>/dev/null) || true
fi
printf '%s\n' "$line" >>"$file" 2>/dev/null || {
	warn "cannot write $file; nothing logged"
	exit 0
}
# Bounded: the last 10000 lines.
lines=$(wc -l <"$file" 2>/dev/null | tr -d ' ')
if [ "${lines:-0}" -gt 10000 ]; then
	tail -n 10000 "$file" >"$file.tmp" 2>/dev/null && mv "$file.tmp" "$file" 2>/dev/null
	rm -f "$file.tmp" 2>/dev/null
fi
exit 0
