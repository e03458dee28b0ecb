#!/usr/bin/env bash
# Prints one summary line for a libFuzzer run from its log (-print_final_stats=1):
#   fuzz_summary.sh <target> <log> [corpus dir]
set -euo pipefail
target=$1 log=$2 dir=${3:-}
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
newu=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
line="$target: execs=${execs:-?} (${rate:-?}/s, ${secs:-?} s) cov=${cov:-?} ft=${ft:-?} corp=${corp:-?} new_units=${newu:-?} peak_rss=${rss:-?}MB"
if [ -n "$dir" ] && [ -d "$dir" ]; then line="$line work_corpus_files=$(find "$dir" -type f | wc -l)"; fi
echo "$line"
