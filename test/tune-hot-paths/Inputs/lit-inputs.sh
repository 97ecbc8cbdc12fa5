#!/usr/bin/env bash
# Differential soundness of --tune-hot-paths on every lit input program.
# Every .mlir file under src-root/test (lit tests and Inputs/ files alike;
# each `// -----` chunk of a split-input file on its own, chunks counted
# from 0) is a unit, unless the test file excludes it with a line
#   EXCLUDE: test/dir/file.mlir[#N] <reason>
# (no #N: the whole file). Each unit goes through soundness.sh (six
# profiles: none, realistic, empty, all-hot, all-cold, all-stale), and by
# what it holds:
# - `func.func @main()` and a call of printMemref*: also RUN=1 AOT=1 AOT_REUSE=1
#   (stc-run and a deployed executable print, per profile, what mlir-opt +
#   mlir-runner print). A @main with results is renamed and called from a
#   new void @main that drops them, so that its printed tables compare.
# - anything else: the object step: `stc-opt --tune-hot-paths [profile]
#   --emit=obj` makes an object that links (its own `main` renamed, a stub C
#   main) against libstc_rt and what aot-build.sh links (libstc_runner_utils.a,
#   libomp), and the executable runs: exit 0, no output. Once per distinct lowered module: profiles whose
#   modules are equal give byte-equal objects. A `func.func @main()` that
#   prints nothing is called by the stub (mode run-silent): the real runtime
#   explores with a fresh cache and check-all (stderr kept in
#   work/<unit>/<profile>.run.err).
# Every unit, every profile: the lowered module holds only llvm.* and omp.*
# ops, in one module (each op's name, from the start of its line).
# Units whose program (without comments and blank lines) equals an earlier
# unit's are covered by that unit's run.
# Fails (exit 1), saying what to do, when a unit is not sound (neither sound
# nor excluded), when an exclusion has no reason or names no file or chunk,
# or when there are no units.
# In: test-file src-root work-dir [jobs (default 2)]. Out: one "covered:"
# line per unit, one "excluded:" line per exclusion, then "N units (M
# programs), K excluded: ok". Tools: stc-opt, stc-run on PATH; cc, objcopy.
set -euo pipefail
testfile=$1 src=$2 work=$3 jobs=${4:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work" && mkdir -p "$work/units" "$work/logs"
marker='^[[:space:]]*// -----'

# The exclusions, checked: a reason, and an existing file (and chunk).
declare -A excluded=()
while IFS= read -r line; do
  entry=${line#EXCLUDE: } entry=${entry%% *} reason=${line#EXCLUDE: "$entry"}
  reason=${reason# }
  [[ -n $reason ]] || { echo "lit-inputs: the exclusion of $entry gives no reason" >&2; exit 1; }
  file=${entry%%#*}
  [[ -f $src/$file ]] || { echo "lit-inputs: stale exclusion: there is no $file" >&2; exit 1; }
  if [[ $entry == *#* ]]; then
    n=$(grep -c -- "$marker" "$src/$file" || true)
    (( n > 0 && ${entry#*#} <= n )) ||
      { echo "lit-inputs: stale exclusion: $file has no chunk ${entry#*#}" >&2; exit 1; }
  fi
  excluded[$entry]=$reason
done < <(grep '^EXCLUDE: ' "$testfile")

# The units, copied to work/units as dir__file[.cN].mlir; a unit whose
# program equals an earlier one's is an alias of it.
units=() programs=()
declare -A first_of=() alias_of=() file_of=()
add_unit() { # unit file
  local key
  file_of[$1]=$2
  key=$(sed -e 's|//.*||' -e 's/[[:space:]]*$//' -e '/^$/d' "$2" | md5sum)
  if [[ -n ${first_of[$key]:-} ]]; then
    alias_of[$1]=${first_of[$key]}
  else
    first_of[$key]=$1
    programs+=("$1")
  fi
  units+=("$1")
}
while IFS= read -r rel; do
  [[ -z ${excluded[$rel]+x} ]] || continue
  name=${rel#test/} name=${name%.mlir} name=${name//\//__}
  if grep -q -- "$marker" "$src/$rel"; then
    n=$(grep -c -- "$marker" "$src/$rel")
    for ((c = 0; c <= n; c++)); do
      awk -v want="$c" -v m="$marker" 'BEGIN { i = 0 } $0 ~ m { i++; next } i == want + 0' "$src/$rel" \
        > "$work/units/$name.c$c.mlir"
      [[ -n ${excluded[$rel#$c]+x} ]] || add_unit "$rel#$c" "$work/units/$name.c$c.mlir"
    done
  else
    cp "$src/$rel" "$work/units/$name.mlir"
    add_unit "$rel" "$work/units/$name.mlir"
  fi
done < <(cd "$src" && find test -name '*.mlir' | LC_ALL=C sort)
[[ ${#units[@]} -gt 0 ]] || { echo "lit-inputs: no units under $src/test" >&2; exit 1; }

# One unit, in work/<name>: soundness.sh, then the checks above.
check_unit() {
  local unit=$1 name mode model dir kind out opt sum ops results stub
  local -A linked=()
  SECONDS=0
  name=${unit#test/} name=${name%%#*} name=${name%.mlir} name=${name//\//__}
  [[ $unit != *#* ]] || name=$name.c${unit#*#}
  model=$work/units/$name.mlir dir=$work/$name
  mkdir -p "$dir"
  mode=obj
  if grep -Eq 'func\.func @main\(\)' "$model"; then
    mode=run-silent
    if grep -Eq 'call @printMemref' "$model"; then
      mode=run
      if grep -Eq 'func\.func @main\(\) *->' "$model"; then
        mode=run-wrapped
        sed -i 's/@main(/@__lit_main(/g' "$model"
        results=$(sed -n 's/.*func\.func @__lit_main() *-> *\(.*[^ ]\) *{.*/\1/p' "$model" | tr -d '()')
        printf '%s\n' "func.func @main() {" \
          "  %r:$(awk -F, '{print NF}' <<< "$results") = call @__lit_main() : () -> ($results)" \
          "  return" "}" >> "$model"
      fi
    fi
  fi
  if [[ $mode == run || $mode == run-wrapped ]]; then
    RUN=1 AOT=1 AOT_REUSE=1 "$here/soundness.sh" "$model" "$dir" "$src"
  else
    "$here/soundness.sh" "$model" "$dir" "$src"
  fi || { echo "FAIL: $unit ($mode): soundness.sh failed (above)"; return 1; }
  for kind in none realistic empty all-hot all-cold all-stale; do
    out=$dir/$name.$kind.ll.mlir
    ops=$(grep -oE '^[[:space:]]*(%[^=]*= )?"?[a-z_][a-z0-9_]*\.[a-z0-9_.]+' "$out" |
          sed -E 's/^[[:space:]]*(%[^=]*= )?"?//' | LC_ALL=C sort -u | grep -vE '^(llvm|omp)\.' || true)
    [[ -z $ops ]] || { echo "FAIL: $unit/$kind: not pure LLVM; ops left:" $ops; return 1; }
    [[ $(grep -c '^module\b' "$out") == 1 ]] || { echo "FAIL: $unit/$kind: not one module"; return 1; }
    [[ $mode == obj || $mode == run-silent ]] || continue
    sum=$(md5sum < "$out") sum=${sum%% *}
    [[ -z ${linked[$sum]:-} ]] || continue
    linked[$sum]=$kind
    opt=()
    [[ $kind == none ]] || opt=(--hot-path-profile="$dir/$name.$kind.yaml")
    stc-opt --tune-hot-paths "${opt[@]}" --emit=obj "$model" -o "$dir/$kind.o" 2> "$dir/$kind.obj.err" ||
      { echo "FAIL: $unit/$kind: stc-opt --emit=obj failed"; grep -v remark: "$dir/$kind.obj.err"; return 1; }
    stub=$work/stub.o
    [[ $mode == obj ]] || stub=$work/stub-run.o
    objcopy --redefine-sym main=__stc_lit_main "$dir/$kind.o"
    cc -o "$dir/$kind.exe" "$stub" "$dir/$kind.o" \
      "$(dirname "$rt")/libstc_runner_utils.a" -Wl,--no-as-needed \
      -lm -lc -Wl,--as-needed "$rt" -lomp -Wl,--no-as-needed -lpthread \
      -Wl,-rpath,"$(dirname "$rt")" -Wl,-rpath,"$llvm_lib" ||
      { echo "FAIL: $unit/$kind: the object does not link against libstc_rt"; return 1; }
    STC_CACHE_DIR=$dir/cache.$kind STC_TUNE_CHECK_ALL=1 \
      "$dir/$kind.exe" > "$dir/$kind.out" 2> "$dir/$kind.run.err" ||
      { echo "FAIL: $unit/$kind: the linked executable failed"; cat "$dir/$kind.run.err"; return 1; }
    [[ ! -s $dir/$kind.out ]] || { echo "FAIL: $unit/$kind: the executable printed something"; return 1; }
  done
  if [[ $mode == run || $mode == run-wrapped ]]; then
    echo "covered: $unit ($mode: 6 profiles, stc-run + AOT = reference) [${SECONDS}s]"
  else
    echo "covered: $unit ($mode: 6 profiles, ${#linked[@]} distinct objects linked) [${SECONDS}s]"
  fi
}
export -f check_unit
rt=$(cd "$(dirname "$(command -v stc-opt)")/../lib" && pwd)/libstc_rt.so
llvm_lib=${STC_LLVM_LIB:-/usr/lib/llvm-22/lib}
echo 'int main(void) { return 0; }' > "$work/stub.c"
printf '%s\n' 'extern void __stc_lit_main(void);' \
  'int main(void) { __stc_lit_main(); return 0; }' > "$work/stub-run.c"
cc -c -o "$work/stub.o" "$work/stub.c"
cc -c -o "$work/stub-run.o" "$work/stub-run.c"
export work src here rt llvm_lib
log_of() { echo "$work/logs/$(sed -e 's|/|__|g' -e 's|#|.c|' <<< "$1").log"; }
export -f log_of

# The longest first (runs, then by size), two at a time by default.
for unit in "${programs[@]}"; do
  run=0
  ! grep -q 'call @printMemref' "${file_of[$unit]}" || run=1
  echo "$run $(wc -c < "${file_of[$unit]}") $unit"
done | sort -k1,1nr -k2,2nr | cut -d' ' -f3- |
  xargs -P "$jobs" -I{} bash -c 'check_unit "$1" > "$(log_of "$1")" 2>&1' _ {} || true

status=0
for unit in "${units[@]}"; do
  first=${alias_of[$unit]:-$unit}
  if ! grep -q "^covered: $first " "$(log_of "$first")"; then
    status=1
    [[ $first == "$unit" ]] || continue
    echo "lit-inputs: $unit is not sound; fix the compiler, or add a line" \
      "'EXCLUDE: $unit <reason>' to $testfile (a compiler bug: a reason starting BUG:). Its log:" >&2
    sed 's/^/  | /' "$(log_of "$unit")" >&2
  elif [[ $first == "$unit" ]]; then
    grep "^covered: " "$(log_of "$unit")"
  else
    echo "covered: $unit (the same program as $first)"
  fi
done
for entry in "${!excluded[@]}"; do echo "excluded: $entry: ${excluded[$entry]}"; done | LC_ALL=C sort
[[ $status == 0 ]] || exit 1
echo "${#units[@]} units (${#programs[@]} programs), ${#excluded[@]} excluded: ok"
