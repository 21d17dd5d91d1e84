#!/usr/bin/env bash
# Walks whose output docs/generate.md shows, made for real in a temporary copy of the checkout's configs/ and data/
# (shown as "."), the checkout's embedding cache copied in (a corpus the demo's MiniLM run encoded is not encoded
# again). The generator is `tests/fake_judge.py --writer`, a STAND-IN for the reader's own server (a fixed rule
# with copied wording and duplicates planted; not a model), on port 8096 as configs/benchmarks/generate-demo.yaml names.
#   demo     20 questions from passages across the corpus's topics, then the first stored row
#   refused  the generator renamed qwen2.5:7b-instruct: the family of the config's production_llm, refused
set -euo pipefail
SCENARIO=${1:?usage: scripts/generate-walk.sh demo|refused}
source "$(dirname "$0")/docs-show.sh" "docs-generate-$SCENARIO" "."
cp -r "$REPO/configs" "$REPO/data" .
WRITER_PID=""
trap '[ -z "$WRITER_PID" ] || kill "$WRITER_PID" 2>/dev/null; rm -rf "$WALK"' EXIT
if [ -d "$REPO/results/private-mteb/embeddings" ]; then
  mkdir -p results/private-mteb/embeddings
  (cd "$REPO/results/private-mteb/embeddings" && find . -mindepth 1 -maxdepth 1 ! -name rerank \
    -exec cp -r {} "$WALK/results/private-mteb/embeddings/" \;)
fi

start_writer() {  # the stand-in in the background, its first line kept; waits until it listens
  python "$REPO/tests/fake_judge.py" --writer --port 8096 > "$WALK/.writer.out" 2>&1 &
  WRITER_PID=$!
  for _ in $(seq 100); do
    grep -q "on http" "$WALK/.writer.out" 2>/dev/null && return 0
    kill -0 "$WRITER_PID" 2>/dev/null || { cat "$WALK/.writer.out" >&2; exit 2; }
    sleep 0.1
  done
  echo "scripts/generate-walk.sh: the stand-in writer did not start on port 8096" >&2; exit 2
}

case "$SCENARIO" in
  demo)
    start_writer
    echo "\$ python tests/fake_judge.py --writer --port 8096 &"
    cat .writer.out
    show private-mteb questions generate -c configs/benchmarks/generate-demo.yaml -n 20
    echo "\$ head -1 configs/tasks/northwind-kb.added_questions.jsonl"
    head -1 configs/tasks/northwind-kb.added_questions.jsonl ;;
  refused)
    sed -e "s|^  model: fake-writer-rule|  model: qwen2.5:7b-instruct|" configs/benchmarks/generate-demo.yaml \
      > configs/benchmarks/generate-qwen.yaml
    echo "# generate-qwen.yaml: generate-demo.yaml with the generator's model qwen2.5:7b-instruct"
    show_rc private-mteb questions generate -c configs/benchmarks/generate-qwen.yaml -n 20 ;;
  *) echo "scripts/generate-walk.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
