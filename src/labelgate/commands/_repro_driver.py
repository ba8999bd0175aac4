"""Replay the failing batches of this bundle through CrossEntropyLoss, each in a fresh process.

    python repro.py                 # on the GPU if there is one, else the CPU
    python repro.py --device cpu

Needs torch and pyarrow. Each batch runs in its own process (``replay.py``, beside this file):
after a device-side assert the CUDA context, and the process, are lost. CUDA_LAUNCH_BLOCKING=1 is
set on NVIDIA builds only, so the error is reported at the batch that caused it. Exit status 1
when a batch fails as recorded in ``case.json`` (the bad case reproduces), 0 when none fails, 2
when a batch behaves otherwise than recorded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def replay(batch: int, case: dict[str, object], device: str) -> dict[str, object]:
    """Run one batch in a fresh process; return its outcome."""
    spec = {
        "batches": str(HERE / "batches.parquet"),
        "num_classes": case["num_classes"],
        "ignore_index": case["ignore_index"],
        "weights": case["class_weights"],
        "task": case["task"],
        "device": device,
        "blocking": True,
        "only": [batch],
        "stop_on_error": True,
    }
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, str(HERE / "replay.py"), str(spec_path)],
            capture_output=True,
            text=True,
            check=False,
        )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    env: dict[str, object] = next((e for e in events if e["event"] == "env"), {})
    for e in events:
        if e["event"] == "error":
            return {"outcome": "raised", "error": f"{e['type']}: {e['message']}", "env": env}
        if e["event"] == "batch":
            return {"outcome": "ok" if e["finite"] else "nan", "loss": e["loss"], "env": env}
    tail = [line for line in proc.stderr.splitlines() if line.strip()][-3:]
    return {
        "outcome": "raised",
        "error": " | ".join(tail) or f"exit status {proc.returncode}",
        "env": env,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    args = parser.parse_args()
    case = json.loads((HERE / "case.json").read_text(encoding="utf-8"))
    reproduced = unexpected = 0
    for entry in case["failing_batches"]:
        batch, recorded = entry["batch"], entry["recorded"]
        got = replay(batch, case, args.device)
        env = got.get("env")
        env = env if isinstance(env, dict) else {}
        where = f"{env.get('device', '?')} ({env.get('backend', '?')})"
        detail = got.get("error") or f"loss {got.get('loss')}"
        expected = {"raises": "raised", "nan": "nan"}[recorded]
        verdict = (
            "reproduced" if got["outcome"] == expected else f"NOT reproduced (recorded: {recorded})"
        )
        print(f"batch {batch} on {where}: {got['outcome']}: {detail} -> {verdict}")
        if got["outcome"] == expected:
            reproduced += 1
        elif got["outcome"] != "ok":
            unexpected += 1
    print(f"{reproduced} of {len(case['failing_batches'])} failing batches reproduced")
    if unexpected:
        return 2
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
