#!/usr/bin/env bash
# Runs the trainer-adapter tests against the trainers' own code, one virtual environment per
# trainer (they pin conflicting versions of transformers and torch), plus the examples' dry runs.
# The default test run (`make test`) uses local stubs instead and needs none of this.
#
#   bash tests/integrations/run_against_real_trainers.sh --setup   # make the venvs (PyPI, ~10 GB, slow)
#   bash tests/integrations/run_against_real_trainers.sh           # run the checks
#
# Venvs: $VENVS/{trl,verl,openrlhf,skyrl,skyrl312}-venv (VENVS defaults to /tmp). What is installed
# follows requirements/integrations-*.txt; where a trainer cannot be installed whole on a machine
# without CUDA, the comments there say what was installed instead, and --setup does that.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENVS=${VENVS:-/tmp}
COMMON=("gymnasium>=1.0,<2" numpy pandas tqdm matplotlib fastapi uvicorn websockets pytest)

setup() {
    python3 -m venv "$VENVS/trl-venv" && "$VENVS/trl-venv/bin/pip" install -q -r requirements/integrations-trl.txt "${COMMON[@]}"
    python3 -m venv "$VENVS/verl-venv" && "$VENVS/verl-venv/bin/pip" install -q -r requirements/integrations-verl.txt "${COMMON[@]}"
    # openrlhf requires deepspeed and flash-attn, which need CUDA to build: its pure-Python code only.
    python3 -m venv "$VENVS/openrlhf-venv" && "$VENVS/openrlhf-venv/bin/pip" install -q --no-deps openrlhf==0.11.2 \
        && grep -v '^openrlhf==' requirements/integrations-openrlhf.txt | "$VENVS/openrlhf-venv/bin/pip" install -q -r /dev/stdin "${COMMON[@]}" tokenizers
    python3 -m venv "$VENVS/skyrl-venv" && "$VENVS/skyrl-venv/bin/pip" install -q -r requirements/integrations-skyrl.txt "${COMMON[@]}" torch==2.13.0 transformers tokenizers
    # SkyRL's trainer (skyrl 0.3.0) imports only on Python >= 3.12 (a TypedDict that pydantic refuses on 3.11);
    # its skyrl-train extra needs flash-attn (CUDA), so the modules its generator imports are named instead.
    python3.12 -m venv "$VENVS/skyrl312-venv" && "$VENVS/skyrl312-venv/bin/pip" install -q -r requirements/integrations-skyrl.txt \
        skyrl==0.3.0 torch==2.13.0 loguru omegaconf aiohttp ray jaxtyping torchdata "${COMMON[@]}"
}

if [ "${1:-}" = "--setup" ]; then setup; exit $?; fi

failed=()
check() {  # check NAME PYTHON ARGS...: run one check, remember a failure, go on
    local name=$1 python=$2; shift 2
    if [ ! -x "$python" ]; then echo "== $name: SKIPPED ($python missing; run with --setup)"; return; fi
    echo "== $name"
    if ! PYTHONPATH="$ROOT:$ROOT/tests/integrations" TRL_EXPERIMENTAL_SILENCE=1 "$python" "$@"; then failed+=("$name"); fi
}
pytest_args=(-m pytest -q -p no:cacheprovider -o addopts= -W ignore::DeprecationWarning)
tmp=$(mktemp -d)

check "trl: adapter tests, with a tiny GRPO step" "$VENVS/trl-venv/bin/python" "${pytest_args[@]}" tests/integrations/test_integrations_trl.py tests/integrations/test_integrations_common.py
check "trl: examples/train_trl.py --tiny" "$VENVS/trl-venv/bin/python" examples/train_trl.py --tiny --output-dir "$tmp/trl"
check "verl: adapter tests" "$VENVS/verl-venv/bin/python" "${pytest_args[@]}" tests/integrations/test_integrations_verl.py
check "verl: examples/train_verl.py --dry-run" "$VENVS/verl-venv/bin/python" examples/train_verl.py --dry-run --num-tasks 8 --num-val-tasks 4 --output-dir "$tmp/verl"
check "openrlhf: adapter tests" "$VENVS/openrlhf-venv/bin/python" "${pytest_args[@]}" tests/integrations/test_integrations_openrlhf.py
check "openrlhf: tokenizer for the dry run" "$VENVS/openrlhf-venv/bin/python" -c "from integrations_support import byte_tokenizer; byte_tokenizer().save_pretrained('$tmp/tokenizer')"
check "openrlhf: examples/train_openrlhf.py --dry-run" "$VENVS/openrlhf-venv/bin/python" examples/train_openrlhf.py --dry-run --tokenizer "$tmp/tokenizer" --num-tasks 8 --output-dir "$tmp/openrlhf"
check "skyrl-gym: adapter tests" "$VENVS/skyrl-venv/bin/python" "${pytest_args[@]}" tests/integrations/test_integrations_skyrl.py
check "skyrl (trainer, Python 3.12): adapter tests, with SkyRL's own generator" "$VENVS/skyrl312-venv/bin/python" "${pytest_args[@]}" tests/integrations/test_integrations_skyrl.py
check "skyrl (trainer, Python 3.12): examples/train_skyrl.py --dry-run" "$VENVS/skyrl312-venv/bin/python" examples/train_skyrl.py --dry-run --num-tasks 8 --num-val-tasks 4 --output-dir "$tmp/skyrl"

rm -rf "$tmp"
if [ ${#failed[@]} -gt 0 ]; then printf 'FAILED: %s\n' "${failed[@]}"; exit 1; fi
echo "all checks passed"
