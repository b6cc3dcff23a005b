"""int8 on a CPU without VNNI, run for real: this process's embedder under QEMU's user-mode
emulation of a Haswell CPU (AVX2, no AVX-512, no VNNI), where ONNX Runtime picks its AVX2 int8
kernels.

The file's signed int8 weights meet AVX2's `vpmaddubsw`, whose 16-bit sums saturate: their
vectors drift from the exact ones. The same weights shifted to uint8 (what the embedder runs
on such a CPU, `int8_plan`) are multiplied in 16-bit lanes that cannot saturate: their vectors
are the native ones but for float rounding around the products (which can move a value across
a quantization step a layer later: on long abstracts the two agree to cosine 0.998,
benchmarks/README.md), and as close to fp32.

Needs `qemu-x86_64` (Debian's `qemu-user`): skipped without it, failed under CI (which
installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from biomcp.adapters.embeddings.onnx import OnnxEmbedder, cpu_flags, int8_plan

CPU = "Haswell-v4"
TEXTS = [
    "Aspirin reduced the risk of stroke (HR 0.78, 95% CI 0.65-0.93) compared with placebo.",
    "Mice lacking the receptor gained less weight than wild-type littermates " * 12,
    "Systematic review of randomized trials of statins in older adults. " * 5,
]
PROBE = """
import json, sys
from pathlib import Path
from biomcp.adapters.embeddings.onnx import OnnxEmbedder
texts = json.loads(sys.argv[2])
print(json.dumps({
    weights: OnnxEmbedder(
        fused_cache=Path(sys.argv[1]), threads=1, precision="int8", uint8_weights=weights == "uint8"
    ).embed_sync(texts)
    for weights in ("uint8", "int8")
}))
"""


def qemu() -> str:
    found = shutil.which("qemu-x86_64")
    if found:
        return found
    hint = "install Debian's qemu-user to run it"
    if os.environ.get("CI"):
        pytest.fail(f"qemu-x86_64 is missing but CI is set: CI must run this test ({hint})")
    pytest.skip(f"qemu-x86_64 is missing: {hint}")


def vectors(command: list[str], cache: Path) -> dict[str, np.ndarray]:
    done = subprocess.run(  # noqa: S603 - this interpreter, maybe under qemu
        [*command, sys.executable, "-c", PROBE, str(cache), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {key: np.asarray(value) for key, value in json.loads(done.stdout).items()}


def test_uint8_weights_are_exact_where_avx2_saturates_signed_ones(tmp_path: Path) -> None:
    emulator = qemu()
    # the rewritten graphs are kept natively first: the emulated process only runs them
    for uint8 in (False, True):
        OnnxEmbedder(
            fused_cache=tmp_path, threads=1, precision="int8", uint8_weights=uint8
        ).embed_sync(TEXTS[:2])
    assert len(list(tmp_path.glob("*.onnx"))) == 3
    native = vectors([], tmp_path)
    emulated = vectors([emulator, "-cpu", CPU], tmp_path)
    # uint8: the same integer products on both CPUs, float rounding aside
    assert (native["uint8"] * emulated["uint8"]).sum(axis=1).min() > 0.99999
    fp32 = np.asarray(OnnxEmbedder(threads=1, precision="fp32").embed_sync(TEXTS))
    assert (emulated["uint8"] * fp32).sum(axis=1).min() >= 0.99
    # natively exact (signed weights): the emulated AVX2 products saturated
    if not int8_plan(cpu_flags()).uint8_weights:
        assert (native["int8"] * emulated["int8"]).sum(axis=1).min() < 0.9999
