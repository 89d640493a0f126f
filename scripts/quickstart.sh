#!/usr/bin/env bash
# The README's first command: set up what is missing, then run Rein's main job, the verified
# mission desk_task, in a fresh workspace with the model and levers the measurements picked
# (README, Known gaps: the 1.5B with every lever on but repeat-penalty, task-reminder and four
# levers measured without a gain, and verified sampling of up to 3 candidates per write), and
# print the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
model="${REIN_QUICKSTART_MODEL:-qwen2.5-coder-1.5b}"
seed="${REIN_QUICKSTART_SEED:-0}"
./target/release/rein models pull "$model"
workspace="$(mktemp -d "${TMPDIR:-/tmp}/rein-desk-task.XXXXXX")"
echo "quickstart: running mission desk_task with $model, seed $seed, in $workspace" >&2
# The workspace is new and empty, so approving every change up front is allowed: nothing of
# yours can be touched. Exit 0 is a pass and 1 a fail verdict (a small model may well fail the
# judge; the harness worked either way); 2 and 3 are refusals and model failures.
status=0
# The lever set measured on desk_task; levers added since it was measured stay off.
./target/release/rein run desk_task --workspace "$workspace" --model "$model" --seed "$seed" --approve=all \
  --lever all=on --lever repeat-penalty=off --lever task-reminder=off \
  --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever find-inputs=off --lever wider-search=off --lever answer-lines=off --lever read-cited=off --lever task-search=off --lever folder-stats=off --lever whole-rewrite=off --lever line-fields=off --lever named-rows=off --lever readable-figures=off --lever line-edits=off --lever sibling-lines=off --lever no-echo=off --lever row-query=off --lever whole-reads=off --lever glob-reads=off --lever combined-totals=off --lever change-list=off --lever own-totals=off --lever file-notes=off --lever plain-counts=off --lever asked-counts=off --lever cited-reads=off --samples 3 || status=$?
if [ "$status" -gt 1 ]; then
  exit "$status"
fi
echo "quickstart: the deliverable is in $workspace/out; replay the run with ./target/release/rein journal show <run>" >&2
