# Sourced (not run) by the scripts whose output the docs show (scripts/docs_outputs.py pastes it into the pages):
#   source "$(dirname "$0")/docs-show.sh" NAME SHOWN_AS
# makes a temporary folder NAME.XXXXXX (removed on exit), cd's into it and defines `show`: it prints
# "$ COMMAND" and what the command prints, with the temporary folder written as SHOWN_AS (the reader's own
# folder, e.g. ~/my-search, or "." for a copy of the checkout) and the checkout's path as ".", so a shown output
# never carries a path of the machine that made it. `show_rc` does the same for "COMMAND; echo $?".
# Puts the checkout's .venv (if any) first on PATH and keeps every model and dataset offline.
# With DOCS_WALK_KEEP=DIR the walk's folder is DIR (made if missing) and kept, so a later walk can go on from it
# (docs/latency.md: the stats of the very pass the block above shows).
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
if [ -n "${DOCS_WALK_KEEP:-}" ]; then
  WALK=$(mkdir -p "$DOCS_WALK_KEEP" && cd "$DOCS_WALK_KEEP" && pwd -P)
else
  WALK=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")" && pwd -P)
  trap 'rm -rf "$WALK"' EXIT
fi
SHOWN_AS=$2
export PATH="$REPO/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cd "$WALK"

# stdin with the machine's paths written as the reader's (the walk's folder first: it may lie inside the checkout)
as_reader() { sed -e "s|$WALK|$SHOWN_AS|g" -e "s|$REPO|.|g"; }

# the command line as a reader types it: an argument with spaces or shell characters in double quotes
cmdline() {
  local out="" a
  for a in "$@"; do
    if [[ -z $a || $a =~ [[:space:]\"\'\$\*\?\;\&\|\<\>\(\)\`] ]]; then out+=" \"${a//\"/\\\"}\""; else out+=" $a"; fi
  done
  echo "${out# }"
}

show() { echo "\$ $(cmdline "$@")"; "$@" 2>&1 | as_reader; }

show_rc() {
  echo "\$ $(cmdline "$@"); echo \$?"
  local rc=0
  "$@" > "$WALK/.show_rc.out" 2>&1 || rc=$?
  as_reader < "$WALK/.show_rc.out"
  echo "$rc"
}
