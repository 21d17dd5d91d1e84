#!/usr/bin/env bash
# Walks whose output docs/llm-judge.md shows, made for real in a temporary copy of the checkout's configs/ and data/
# (shown as "."), with the demo's MiniLM and BM25 stored first (the checkout's embedding cache copied in: nothing
# is encoded again). The judge is tests/fake_judge.py, a STAND-IN for the reader's own server (word overlap, a
# tenth of its answers one grade off; not a model), on the ports the pages name.
#   unreachable  judge-demo.yaml's judge on port 8098 where nothing listens (model `other`): the one-line stop
#   demo         the stand-in on 8099: every pooled pair graded, then the same command again (all from the cache)
#   refused      a stand-in on 8097 that answers every pair out of format, a two-pair pool, --show-refused 2
#   agreement    the stand-in's grades (of every pair, human-judged ones too) against the humans'
set -euo pipefail
SCENARIO=${1:?usage: scripts/judge-walks.sh unreachable|demo|refused|agreement}
source "$(dirname "$0")/docs-show.sh" "docs-judge-$SCENARIO" "."
cp -r "$REPO/configs" "$REPO/data" .
JUDGE_PID=""
trap '[ -z "$JUDGE_PID" ] || kill "$JUDGE_PID" 2>/dev/null; rm -rf "$WALK"' EXIT

stored_demo() {  # the demo's MiniLM and BM25 stored, as after `private-mteb run -c configs/benchmarks/demo.yaml`
  local cache="$REPO/results/private-mteb/embeddings"
  if [ -d "$cache" ]; then
    mkdir -p results/private-mteb/embeddings
    (cd "$cache" && find . -mindepth 1 -maxdepth 1 ! -name rerank -exec cp -r {} "$WALK/results/private-mteb/embeddings/" \;)
  fi
  private-mteb run -c configs/benchmarks/demo.yaml >/dev/null 2>&1
}

start_judge() {  # PORT [ANSWER]: the stand-in in the background, its first line kept; waits until it listens
  python "$REPO/tests/fake_judge.py" --port "$1" ${2:+--answer "$2"} > "$WALK/.judge.out" 2>&1 &
  JUDGE_PID=$!
  for _ in $(seq 100); do
    grep -q "on http" "$WALK/.judge.out" 2>/dev/null && return 0
    kill -0 "$JUDGE_PID" 2>/dev/null || { cat "$WALK/.judge.out" >&2; exit 2; }
    sleep 0.1
  done
  echo "scripts/judge-walks.sh: the stand-in judge did not start on port $1" >&2; exit 2
}

timed() {  # show COMMAND..., then its wall time on this machine as a comment
  local t0=$EPOCHREALTIME
  show "$@"
  awk "BEGIN { printf \"# %.1f s\\n\", $EPOCHREALTIME - $t0 }"
}

# judge-demo.yaml's judge under another port and model name (the judge's identity changes with both)
judge_on() { sed -e "s|127.0.0.1:8099|127.0.0.1:$1|" -e "s|^  model: fake-judge-overlap|  model: $2|" \
  configs/benchmarks/judge-demo.yaml > "configs/benchmarks/$3"; }

stored_demo
case "$SCENARIO" in
  unreachable)
    judge_on 8098 other judge-x.yaml
    echo "# judge-x.yaml: judge-demo.yaml with port 8098 (nothing listens there) and model \`other\`"
    show_rc private-mteb labels judge -c configs/benchmarks/judge-x.yaml ;;
  demo)
    start_judge 8099
    echo "\$ python tests/fake_judge.py --port 8099 &"
    cat .judge.out
    timed private-mteb labels judge -c configs/benchmarks/judge-demo.yaml --also-judged
    echo "# again: nothing is asked"
    show private-mteb labels judge -c configs/benchmarks/judge-demo.yaml --also-judged ;;
  refused)
    ANSWER=$'The passage is relevant to the query.\nFinal Score: 2'
    start_judge 8097 "$ANSWER"
    judge_on 8097 small-instruct judge-small.yaml
    private-mteb labels pool -c configs/benchmarks/demo.yaml --depth 1 -o pool.csv >/dev/null 2>&1
    head -2 pool.jsonl > pool2.jsonl && mv pool2.jsonl pool.jsonl
    echo "# judge-small.yaml: judge-demo.yaml with port 8097 and model small-instruct, served by"
    echo "#   python tests/fake_judge.py --port 8097 --answer 'The passage is relevant to the query.\nFinal Score: 2'"
    echo "# pool.jsonl: the first two pairs of \`labels pool\`"
    show_rc private-mteb labels judge -c configs/benchmarks/judge-small.yaml --pool pool.jsonl --show-refused 2 ;;
  agreement)
    start_judge 8099
    private-mteb labels judge -c configs/benchmarks/judge-demo.yaml --also-judged >/dev/null 2>&1
    timed private-mteb labels agreement --judge -c configs/benchmarks/judge-demo.yaml ;;
  *) echo "scripts/judge-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
