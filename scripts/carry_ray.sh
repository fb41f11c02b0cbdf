#!/usr/bin/env bash
# Downloads Ray (the version tests/python/requirements/ray.txt pins) as wheels
# for the GPU machines (Python 3.12, x86_64, no package index there), with only
# those of its dependencies their image lacks, into two parts that each fit one
# device call (64 MiB a call, the repository and other carried folders
# included). Run here, where pip reaches the index.
#   scripts/carry_ray.sh            writes .cache/ray/part1 and .cache/ray/part2, prints their sizes
#
# The parts live under .cache/ (ignored), not .whl/ or .deps/: the calls that
# carry those folders whole would carry Ray's 79 MB too and pass the limit.
# Ray's wheel is cut in two with split -b: part1 holds its first PART1_MIB
# (default 44) MiB, part2 the rest and the dependency wheels. Each part holds
# MANIFEST (the whole wheel's sha256, each piece's and each wheel's, and which
# part each is in). Two device calls, back to back (the machine keeps /tmp for
# 30 s after a call, and the two parts do not fit one call):
#   call 1  carry [".cache/ray/part1"]
#           command: bash scripts/gpu_ray.sh stash        (copies part1 into /tmp/tessera-ray-stash)
#   call 2  carry [".cache/ray/part2", ".whl", ".deps/xgboost"], within 30 s of call 1's end
#           command: bash scripts/gpu_check.sh ray        (gpu_ray.sh joins the pieces from the stash
#           and part2, checks the sha256, installs Ray into $BUILD/raysite and runs the Ray tests)
# gpu_ray.sh's header has the details; a missing piece names the call that brings it.
set -euo pipefail
cd "$(dirname "$0")/.."
PART1_MIB=${PART1_MIB:-44}
DEST=.cache/ray
version=$(sed -n 's/^ray==//p' tests/python/requirements/ray.txt)
[ -n "$version" ] || { echo "carry_ray: no ray==VERSION line in tests/python/requirements/ray.txt" >&2; exit 1; }
# What the GPU machines' image holds (its package list as read on 2026-11-17): a
# dependency named here is not carried. Another name to skip: GPU_HAS_MORE="a b".
GPU_HAS="
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch
build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage
cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops
equinox etils execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch
grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna imageio iniconfig
interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown
markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict
multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13
nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13
nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir
onnxruntime onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix
orbax-checkpoint packaging pandas pathspec patsy peft pillow pip pluggy portalocker
prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments pyparsing
pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout
pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors
scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers
setuptools shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard
tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch
torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm transformers treescope triton
typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt xarray
xxhash yarl zipp ${GPU_HAS_MORE:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Python 3.12 on x86_64 Linux, whatever interpreter runs pip here.
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
export CARRY_PIP_ARGS="--no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 ${PLATFORMS[*]}"
echo "carry_ray: ray==$version and what it needs beyond the GPU image, for cp312 x86_64"
# Ray, then each requirement it (or a carried dependency) has that the image lacks, recursively:
# the markers evaluated for CPython 3.12 on Linux x86_64, extras left out.
GPU_HAS="$GPU_HAS" python3 - "$tmp" "ray==$version" <<'PY'
import os, re, shlex, subprocess, sys, zipfile
from pathlib import Path
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement

out, first = Path(sys.argv[1]), sys.argv[2]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
have = {norm(n) for n in os.environ["GPU_HAS"].split()}
env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
       "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}

def download(spec: str) -> Path:
    before = set(out.iterdir())
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(out), *shlex.split(os.environ["CARRY_PIP_ARGS"]),
                    spec], check=True)
    new = set(out.iterdir()) - before
    if len(new) != 1:
        sys.exit(f"carry_ray: pip download {spec} gave {sorted(p.name for p in new)}")
    return new.pop()

def requires(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    reqs = [Requirement(l.split(":", 1)[1].strip()) for l in lines if l.startswith("Requires-Dist:")]
    return [r for r in reqs if r.marker is None or r.marker.evaluate(env)]

queue, seen = [first], set()
while queue:
    spec = queue.pop(0)
    wheel = download(spec)
    print(f"  {wheel.name}  ({wheel.stat().st_size / 2**20:.1f} MiB)")
    for r in requires(wheel):
        name = norm(r.name)
        if name in seen:
            continue
        seen.add(name)
        if name in have:
            print(f"    {r}: on the GPU image")
        else:
            queue.append(f"{r.name}{r.specifier}")
PY
wheel=$(cd "$tmp" && ls ray-"$version"-*.whl)
rm -rf "$DEST" && mkdir -p "$DEST/part1" "$DEST/part2"
split -b "${PART1_MIB}M" -d -a 2 "$tmp/$wheel" "$tmp/$wheel."
pieces=("$tmp/$wheel".[0-9][0-9])
[ "${#pieces[@]}" -eq 2 ] || { echo "carry_ray: $wheel cut into ${#pieces[@]} pieces, not 2: set PART1_MIB" >&2; exit 1; }
mv "${pieces[0]}" "$DEST/part1/"
mv "${pieces[1]}" "$DEST/part2/"
for w in "$tmp"/*.whl; do [ "$(basename "$w")" = "$wheel" ] || mv "$w" "$DEST/part2/"; done
{
  echo "wheel $wheel $(sha256sum "$tmp/$wheel" | cut -d' ' -f1) -"
  for part in part1 part2; do
    for f in "$DEST/$part"/*; do
      case "$f" in *.whl) kind=dep ;; *) kind=piece ;; esac
      echo "$kind $(basename "$f") $(sha256sum "$f" | cut -d' ' -f1) $part"
    done
  done
} > "$tmp/MANIFEST"
cp "$tmp/MANIFEST" "$DEST/part1/" && cp "$tmp/MANIFEST" "$DEST/part2/"
cat "$DEST/part1/MANIFEST"
du -b --apparent-size -s "$DEST/part1" "$DEST/part2" | awk '{printf "carry_ray: %s %.1f MiB\n", $2, $1 / 1048576}'
echo "carry_ray: with the repository's own files (tracked and untracked, not ignored):"
repo=$( { git ls-files -z; git ls-files -z -o --exclude-standard; } | xargs -0 -r du -cb --apparent-size 2>/dev/null | awk '$2=="total"{s+=$1} END{print s}')
for call in "1:$DEST/part1" "2:$DEST/part2 .whl .deps/xgboost"; do
  n=${call%%:*} paths=${call#*:}
  # shellcheck disable=SC2086
  size=$(du -cb --apparent-size $paths 2>/dev/null | awk '$2=="total"{print $1}')
  awk -v n="$n" -v p="$paths" -v s="$size" -v r="$repo" \
    'BEGIN{printf "  call %s (carry %s): %.1f MiB of 64\n", n, p, (s + r) / 1048576}'
done
