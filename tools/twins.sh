#!/bin/sh
# The server half written twice: lines of the JS files and their Python twins
# (the pairs issue 39 names, and the run holding), at a git revision.
#   tools/twins.sh [REV]      (default: the working tree)
# A pair's lines are what is left to drift; the decisions the core took over
# are gone from both sides.
set -eu
rev=${1:-}
count() { # lines of the files that exist at $rev
  total=0
  for f in "$@"; do
    if [ -n "$rev" ]; then n=$(git show "$rev:$f" 2>/dev/null | wc -l || echo 0); else n=$( [ -f "$f" ] && wc -l < "$f" || echo 0); fi
    total=$((total + n))
  done
  echo "$total"
}
row() { # name, js files (space separated), python files
  printf '%-22s %6s %6s\n' "$1" "$(count $2)" "$(count $3)"
}
J=js/src; P=python/agui_state_sync
printf '%-22s %6s %6s\n' pair js python
row "durable emitter" "$J/server/store/durable-emitter.js" "$P/durable.py"
row "durable line" "$J/server/store/durable-line.js" "$P/_durable_line.py"
row "durable activities" "$J/server/store/durable-activities.js" "$P/_durable_activities.py"
row "sequencing" "$J/ag-ui/sequence-state.js $J/server/upstream-cursor.js" "$P/run_stamper.py $P/threads.py $P/sequence.py"
row "catch-up" "$J/server/catch-up.js" "$P/resync.py"
row "fan-out" "$J/server/store/fanout.js" "$P/_fanout.py"
row "once" "$J/server/once.js" "$P/once.py"
row "approvals" "$J/server/approvals.js $J/proxy/approvals.js" "$P/approvals.py $P/_asgi_approvals.py"
row "flaky segments" "$J/proxy/flaky-segments.js" "$P/_flaky_segments.py"
row "operate" "$J/proxy/operate.js" "$P/operate.py"
row "run holding" "$J/proxy/run-stream.js $J/proxy/run.js $J/proxy/resume.js $J/proxy/event-log.js $J/proxy/attach.js $J/proxy/remote-run.js $J/proxy/remote-runs.js $J/proxy/stored-run-log.js $J/proxy/run-store.js $J/proxy/run-life.js" "$P/_run_holder.py $P/_asgi_runs.py $P/_asgi_clients.py $P/stores/run_log.py"
