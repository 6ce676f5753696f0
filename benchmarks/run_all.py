"""Run every benchmark and paper reproduction, writing benchmarks/results/.

    python benchmarks/run_all.py              # full runs (about four hours on one core)
    python benchmarks/run_all.py --quick      # smoke runs, results not written
    python benchmarks/run_all.py --n-jobs 16  # the paper-004 reproductions on 16 workers

Each script prints its table and, in full mode, writes ``.json``, ``.md``
and ``.rst`` files into ``benchmarks/results``; the documentation includes
the ``.rst`` ones.
"""

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "bench_speed.py",
    "repro_example9.py",
    "repro_surrogate_gap.py",
    "repro_table2.py",
    "repro_fig6.py",
    "bench_control_variates.py",
    "repro_control_variates.py",
    "bench_lfv_speed.py",
    "repro_lfv_linear.py",
    "repro_lfv_nn.py",
    "repro_lfv_real.py",
    "bench_model_selection.py",
    "bench_mixing.py",
    "bench_uq.py",
    "bench_classification.py",
    "bench_classifier_prior.py",
    "repro_vi.py",
    "sweep_vi_tau.py",
    "bench_vi_gradient.py",
    "bench_large_n.py",
    "bench_burn_in.py",
    "repro_sparse.py",
    "bench_sparse.py",
    "bench_distributed.py",
]
# scripts whose replicates run through joblib and whose results do not depend on the worker count
PARALLEL = {"repro_lfv_linear.py", "repro_lfv_nn.py", "repro_lfv_real.py"}


def main(argv):
    quick = "--quick" in argv
    n_jobs = argv[argv.index("--n-jobs") + 1] if "--n-jobs" in argv else None
    failed = []
    for name in SCRIPTS:
        cmd = [sys.executable, str(HERE / name)]
        if quick:
            cmd.append("--quick")
        if n_jobs and name in PARALLEL:
            cmd += ["--n-jobs", n_jobs]
        print(f"== {' '.join(cmd[1:])}", flush=True)
        start = time.perf_counter()
        code = subprocess.call(cmd)
        print(f"== {name}: exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
