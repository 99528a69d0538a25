#!/usr/bin/env bash
# The pull-request check for skills (action.yml runs this; so can any CI or a terminal).
# For each skill file changed between the base branch and HEAD, score the new version against the
# base branch's version with `skillopt eval --baseline`, append the Markdown report to the job
# summary, and fail on a confident regression (or on undecided with fail-on undecided).
#
# Settings (environment):
#   SKILLOPT_SKILLS        skill files: git glob pathspecs, space- or newline-separated (default **/SKILL.md)
#   SKILLOPT_CONFIG        the eval config: a bundled name or a file in the repository (required), read
#                          from the base ref like everything it names (tasks, data): never from the PR
#   SKILLOPT_BASE_REF      the base to compare with, e.g. origin/main (required)
#   SKILLOPT_VERSION       the release tag whose binary to download, e.g. v0.1.0 (unless SKILLOPT_BIN)
#   SKILLOPT_FAIL_ON       regression (default) or undecided
#   SKILLOPT_ARGS          extra arguments for `skillopt eval` (e.g. --set env.limit=50), split on spaces
#   SKILLOPT_RELEASE_URL   where the release assets are (default https://github.com/$SKILLOPT_REPO/releases/download/$SKILLOPT_VERSION)
#   SKILLOPT_REPO          owner/name of the repository that publishes the releases
#   SKILLOPT_BIN           use this skillopt binary instead of downloading one
#   SKILLOPT_CACHE_DIR     the model-call cache (keep it across runs with actions/cache)
#   SKILLOPT_REPORT_DIR    keep each check's folder (skill_check.json/.md, results.jsonl) here, e.g. to upload as an artifact
#   GITHUB_STEP_SUMMARY    where the Markdown goes (GitHub sets it; unset → stdout only)
# Exit: 0 every check passed or was undecided, 1 a check failed, 2 a usage or set-up error.
set -euo pipefail

die() { echo "skill-check: $1" >&2; exit "${2:-2}"; }
summary() { if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat; fi; }
# Text a pull request chose (a file name, an error quoting it) as inert Markdown: every character
# but letters, digits, space and . _ / - becomes an HTML character reference, so a name cannot
# close a code span, start a link or an image, or open an HTML tag in the job summary.
md_text() {
  local s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [A-Za-z0-9\ ._/-]) out+="$c" ;;
      *) out+="&#$(printf '%d' "'$c");" ;;
    esac
  done
  printf '%s' "$out"
}
# A file name as inline code: plain names in backticks, any other inside <code> with references.
md_code() {
  case "$1" in
    *[!A-Za-z0-9\ ._/-]*) printf '<code>%s</code>' "$(md_text "$1")" ;;
    *) printf '`%s`' "$1" ;;
  esac
}
# Lines of a tool's output inside <pre>: only & < > need escaping there.
pre_text() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
# A path given relative to where the script started, made absolute (the checks run in another folder).
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }

[ -n "${SKILLOPT_CONFIG:-}" ] || die "SKILLOPT_CONFIG (input config) is empty: name a bundled config or a config file"
[ -n "${SKILLOPT_BASE_REF:-}" ] || die "SKILLOPT_BASE_REF (input base-ref) is empty: name the branch to compare with, e.g. origin/main"
fail_on="${SKILLOPT_FAIL_ON:-regression}"
case "$fail_on" in regression | undecided) ;; *) die "SKILLOPT_FAIL_ON=$fail_on: use regression or undecided" ;; esac

work="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/skill-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The release asset for this runner: skillopt-<os>-<arch>[.exe], as build.ts names them.
asset_name() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) die "no release binary for this system ($(uname -s))" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no release binary for this CPU ($(uname -m))" ;;
  esac
  [ "$os" = windows ] && { [ "$arch" = x64 ] || die "no release binary for windows-$arch"; echo "skillopt-windows-x64.exe"; return; }
  echo "skillopt-$os-$arch"
}

fetch() {
  if command -v curl >/dev/null 2>&1; then curl -fsSL --retry 3 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then wget -q -O "$2" "$1"
  else die "neither curl nor wget is installed"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# Download the pinned binary and its SHA256SUMS; refuse to run it unless the checksum matches.
download_binary() {
  local name url expected actual
  [ -n "${SKILLOPT_VERSION:-}" ] || die "SKILLOPT_VERSION (input version) is empty: pin a release tag such as v0.1.0"
  name="$(asset_name)"
  url="${SKILLOPT_RELEASE_URL:-}"
  if [ -z "$url" ]; then
    [ -n "${SKILLOPT_REPO:-}" ] || die "SKILLOPT_REPO is empty: name the repository that publishes the releases (owner/name)"
    url="https://github.com/$SKILLOPT_REPO/releases/download/$SKILLOPT_VERSION"
  fi
  url="${url%/}"
  fetch "$url/SHA256SUMS" "$work/SHA256SUMS" || die "cannot download $url/SHA256SUMS" 1
  fetch "$url/$name" "$work/$name" || die "cannot download $url/$name" 1
  expected="$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1; exit }' "$work/SHA256SUMS")"
  [ -n "$expected" ] || die "SHA256SUMS of $SKILLOPT_VERSION lists no $name: refusing to run an unverified binary" 1
  actual="$(sha256_of "$work/$name")"
  if [ "$actual" != "$expected" ]; then
    rm -f "$work/$name"
    die "checksum mismatch for $name ($actual, SHA256SUMS says $expected): refusing to run it" 1
  fi
  chmod +x "$work/$name"
  echo "skill-check: $name $SKILLOPT_VERSION verified (sha256 $actual)" >&2
  bin="$work/$name"
}

bin="${SKILLOPT_BIN:-}"
if [ -z "$bin" ]; then download_binary
else
  [ -x "$bin" ] || die "SKILLOPT_BIN=$bin is not an executable file"
  bin="$(absolute "$bin")" # the checks run in another folder
fi

git rev-parse --verify --quiet "$SKILLOPT_BASE_REF^{commit}" >/dev/null ||
  die "base ref $SKILLOPT_BASE_REF is not in this clone: fetch it first (actions/checkout with fetch-depth: 0)"

pathspecs=()
read -r -d '' -a globs <<<"${SKILLOPT_SKILLS:-**/SKILL.md}" || true
for g in "${globs[@]}"; do pathspecs+=(":(glob)$g"); done
changed=()
# NUL-separated: a name with a newline or a quote is one name, never two or a quoted form.
while IFS= read -r -d '' line; do [ -n "$line" ] && changed+=("$line"); done < <(git diff -z --name-only --diff-filter=AMR "$SKILLOPT_BASE_REF...HEAD" -- "${pathspecs[@]}")

base_md="$(md_text "$SKILLOPT_BASE_REF")"
if [ "${#changed[@]}" -eq 0 ]; then
  echo "### SkillOpt check: no skill file changed against $base_md" | summary
  echo "skill-check: no skill file changed against $SKILLOPT_BASE_REF" >&2
  exit 0
fi

# The pull request is not trusted: its author may edit the config (to send the job's secrets to
# their own endpoint, or run a command evaluator) and the tasks. Every check runs in a copy of the
# base ref's tree, so the config and everything it names come from the base; only the changed
# skill files come from the pull request, read from git as blobs (a link is its target's name).
base_tree="$work/base-tree"
mkdir -p "$base_tree"
git archive --format=tar "$SKILLOPT_BASE_REF" | tar -x -C "$base_tree" ||
  die "cannot read the tree of $SKILLOPT_BASE_REF"
[ -n "${SKILLOPT_CACHE_DIR:-}" ] && export SKILLOPT_CACHE_DIR="$(absolute "$SKILLOPT_CACHE_DIR")"
extra=()
reports="$(absolute "${SKILLOPT_REPORT_DIR:-$work}")"
mkdir -p "$reports"
[ -n "${SKILLOPT_ARGS:-}" ] && read -r -a extra <<<"$SKILLOPT_ARGS"
failed=0
i=0
for path in "${changed[@]}"; do
  i=$((i + 1))
  path_md="$(md_code "$path")"
  base_file="$work/base-$i.md"
  if ! git cat-file -e "$SKILLOPT_BASE_REF:$path" 2>/dev/null; then
    printf '### SkillOpt check: %s — new file\n\nNo version on %s to compare with; nothing to check.\n\n' "$path_md" "$base_md" | summary
    continue
  fi
  git show "$SKILLOPT_BASE_REF:$path" >"$base_file"
  mkdir -p "$work/head-$i"
  head_file="$work/head-$i/SKILL.md"
  git show "HEAD:$path" >"$head_file"
  md="$work/check-$i.md"
  echo "skill-check: $path against $SKILLOPT_BASE_REF" >&2
  set +e
  # Every value is glued to its flag (--skill=PATH), so no name can pass for another flag.
  (cd "$base_tree" && "$bin" eval "--config=$SKILLOPT_CONFIG" "--skill=$head_file" "--baseline=$base_file" \
    "--baseline-label=$SKILLOPT_BASE_REF" "--title=$path" "--markdown=$md" "--fail-on=$fail_on" \
    "--out=$reports/check-$i" ${extra[@]+"${extra[@]}"}) 2>"$work/err-$i"
  code=$?
  set -e
  cat "$work/err-$i" >&2
  if [ -s "$md" ]; then summary <"$md"
  else
    # No report: the check could not score (a usage error, or tasks without an answer).
    printf '### SkillOpt check: %s — no verdict\n\n<pre>\n%s\n</pre>\n\n' "$path_md" "$(grep -v '^\s*\[progress\]' "$work/err-$i" | tail -n 5 | pre_text)" | summary
  fi
  case "$code" in
    0) ;;
    2) echo "skill-check: $path: skillopt eval refused its arguments (exit 2)" >&2; exit 2 ;;
    *) failed=1 ;;
  esac
done
exit "$failed"
