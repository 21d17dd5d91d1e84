#!/usr/bin/env bash
# The query log -> questions path of docs/questions.md, walked for real in a temporary copy of the checkout's configs/
# and data/ (shown as "."): the demo's search log (data/demo_kb/query_log.csv) sampled into questions, then graded
# and scored. Each scenario prints its shown commands as "$ cmd" and their output (scripts/docs-show.sh).
#   sample   questions sample on the demo log, then `run` (the sampled questions await judgment, not scored)
#   judge    the same sample and run made quietly, then `labels pool` (the sampled questions' pairs with the
#            rest), the pool graded by the stand-in rater (scripts/questions_demo_rater.py), `labels import`, `run`
#            and `stats` (the log's questions scored as their own source)
# The demo's corpus vectors come from the checkout's embedding cache when it has them (scripts/docs-outputs.sh runs
# the demo first), so only the log's queries are encoded.
set -euo pipefail
SCENARIO=${1:?usage: scripts/questions-walks.sh sample|judge}
source "$(dirname "$0")/docs-show.sh" "docs-questions-$SCENARIO" "."
cp -r "$REPO/configs" "$REPO/data" .

stored_demo() {
  local cache="$REPO/results/private-mteb/embeddings"
  if [ -d "$cache" ]; then
    mkdir -p results/private-mteb/embeddings
    (cd "$cache" && find . -mindepth 1 -maxdepth 1 ! -name rerank -exec cp -r {} "$WALK/results/private-mteb/embeddings/" \;)
  fi
  private-mteb run -c configs/benchmarks/demo.yaml >/dev/null 2>&1
}

SAMPLE=(private-mteb questions sample data/demo_kb/query_log.csv -t NorthwindKBRetrieval -n 40 --date 2026-12-01)
case "$SCENARIO" in
  sample)
    stored_demo
    show "${SAMPLE[@]}"
    show private-mteb run -c configs/benchmarks/demo.yaml ;;
  judge)
    stored_demo
    "${SAMPLE[@]}" >/dev/null 2>&1
    private-mteb run -c configs/benchmarks/demo.yaml >/dev/null 2>&1   # ranks the sampled questions, unscored
    mkdir -p scripts && cp "$REPO/scripts/questions_demo_rater.py" "$REPO"/scripts/query_log_*.py scripts/
    show private-mteb labels pool -c configs/benchmarks/demo.yaml -t NorthwindKBRetrieval --depth 3 -o pool.csv
    show python scripts/questions_demo_rater.py pool.csv --added configs/tasks/northwind-kb.added_questions.jsonl \
      -o graded.csv
    show private-mteb labels import graded.csv -t NorthwindKBRetrieval --annotator ana
    show private-mteb run -c configs/benchmarks/demo.yaml
    show private-mteb stats -c configs/benchmarks/demo.yaml --metric ndcg_at_10 --by source ;;
  *) echo "scripts/questions-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
