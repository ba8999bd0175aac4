#!/usr/bin/env bash
# A plain git pre-commit hook (for a repository that does not use the pre-commit framework; with
# it, use the labelgate-validate hook of .pre-commit-hooks.yaml): validates the label files this
# commit adds or changes, and only those, as they are staged (the index, not the working tree).
#
#   ln -s ../../pipelines/pre-commit.sh .git/hooks/pre-commit     # or copy it there
#
# Reads from the environment:
#   LABELGATE_ARGS     the options (--schema schemas/annotations.yaml, or --classes 4)
#   LABELGATE_PATHS    the pathspecs of label files (default: '*.parquet' '*.csv' '*.jsonl'),
#                      space-separated, as git reads them (data/ for a folder)
# A commit that stages no label file runs nothing. Exit status: labelgate's (0 pass, 1 the
# commit is refused, 2 usage error or unreadable data); `git commit --no-verify` skips it.
set -euo pipefail

# shellcheck disable=SC2206  # pathspecs and options are space-separated on purpose
specs=(${LABELGATE_PATHS:-'*.parquet' '*.csv' '*.jsonl'})
# shellcheck disable=SC2206
args=(${LABELGATE_ARGS:-})

files=()
while IFS= read -r -d '' path; do
    files+=("$path")
done < <(git diff --cached --name-only --diff-filter=ACMR -z -- "${specs[@]}")
if [ "${#files[@]}" -eq 0 ]; then
    echo "labelgate: no label file staged; nothing to validate"
    exit 0
fi

# The staged content of each file, in a folder of its own: what the commit will hold.
staged=$(mktemp -d)
trap 'rm -rf "$staged"' EXIT
git checkout-index --prefix="$staged/" -- "${files[@]}"
echo "labelgate: validating ${#files[@]} staged label file(s): ${files[*]}"
status=0
(cd "$staged" && labelgate validate --no-progress --max-examples 5 "${args[@]}" "${files[@]}") || status=$?
exit "$status"
