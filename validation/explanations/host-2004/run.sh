#!/bin/bash
# Runs the host-2004 experiment (README.md) on one lane, resumably, as root from the
# repository's root:
#   bash validation/explanations/host-2004/run.sh [LANE]      # default lane $SQUALL_LANE_BASE or 0
# Each scenario file's run goes to validation/out/host-2004/<file>/; a second call resumes the
# runs that exist (squall run --resume --redo-degraded: only missing, failed or degraded
# replications; a busy machine degrades some), so it can be
# stopped and started again. Then: python validation/explanations/host-2004/summarise.py.
set -euo pipefail
here=validation/explanations/host-2004
lane=${1:-${SQUALL_LANE_BASE:-0}}
squall=(.venv/bin/python -m testbed.cli)
# name  scenario file  replications (first-last): the bimodal IIP s+2s cells got 6-10 as well
phases=("iip iip 1 5" "saarto saarto 1 5" "iip-long iip-long 1 5" "iip-6-10 iip 6 10")
for phase in "${phases[@]}"; do
	read -r name file first last <<< "$phase"
	out=validation/out/host-2004/$name
	run=$(ls -d "$out"/*/ 2>/dev/null | head -1 || true)
	if [ -n "$run" ]; then
		"${squall[@]}" run --resume "$run" --redo-degraded --lane-base "$lane"
	else
		mkdir -p "$out"
		"${squall[@]}" run "$here/$file.toml" --results "$out" --lane-base "$lane" --parallel 1 \
			--first-replication "$first" --replications "$last"
	fi
done
