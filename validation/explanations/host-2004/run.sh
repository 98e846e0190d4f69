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
for name in iip saarto iip-long; do
	out=validation/out/host-2004/$name
	run=$(ls -d "$out"/*/ 2>/dev/null | head -1 || true)
	if [ -n "$run" ]; then
		"${squall[@]}" run --resume "$run" --redo-degraded --lane-base "$lane"
	else
		mkdir -p "$out"
		"${squall[@]}" run "$here/$name.toml" --results "$out" --lane-base "$lane" --parallel 1
	fi
done
