# Shell helpers for command-line tests (sourced): `check EXPECTED_RC DESCRIPTION -- command...`
# runs the command with stdout/stderr in $out/stdout and $out/stderr and counts a failure in
# $fails when its exit code differs; `has FILE TEXT DESCRIPTION` counts one when FILE lacks TEXT.
# The caller sets out (a scratch directory) and fails=0.
check() {
    want=$1
    what=$2
    shift 3
    "$@" >"$out/stdout" 2>"$out/stderr"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want" >&2
        sed 's/^/  stderr: /' "$out/stderr" >&2
        fails=$((fails + 1))
    fi
}
has() {
    grep -qF -- "$2" "$1" || { echo "FAIL: $3: no '$2' in $1" >&2; fails=$((fails + 1)); }
}
