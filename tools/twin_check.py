"""Do the IMDB twins learn alike? Each framework, in its own fresh process, starts from the same arrays (``init``
``keras``: ``keras_initial_weights``) and takes Adam steps on the same batches, in the order a trial's sampler
gives them (``EpochPermutationSampler``, epoch 0). The per-step training losses are then set side by side.

Identical code paths give losses that agree to float32 rounding at first and drift apart slowly (the two
frameworks' kernels sum in different orders, and training amplifies the difference); a bug in one twin (a gate
order, a bias counted twice, a gradient scaled twice) shows at the first steps. So the check reads the first
steps: ``first_apart`` is the first step whose losses differ by more than ``tolerance`` (relative).

``python tools/twin_check.py --steps 60 --seed 43`` runs it on the real reviews at the study's model size and
batch size (the training-quality part's: batch 64); the tests run it on a tiny model and random tokens. A check of
the study's code, not part of it: a tool of the repository, like the harness benchmarks."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from fwbench.execute import child_env, interpreter_of
from fwbench.studies import get_study


def _train_steps(spec: dict) -> list[float]:
    """In the child: ``steps`` Adam steps of one arm, one batch each; the loss of each batch before its step."""
    import numpy as np

    from fwbench.sentiment import EpochPermutationSampler

    study = get_study("imdb")
    be = study.arm(spec["arm"]).load_backend()
    be.configure_threads(spec["threads"])
    be.set_seed(spec["seed"])
    m, batch, steps = spec["model"], spec["batch_size"], spec["steps"]
    if spec["data"] == "imdb":
        from fwbench.data.imdb import Encoding, load_imdb

        data = load_imdb(encoding=Encoding(num_words=m["num_words"], maxlen=spec["seq_len"]))
        x, y = data.x_train, data.y_train
    else:  # random tokens and labels: enough to compare the twins' arithmetic
        rng = np.random.RandomState(spec["seed"])
        x = rng.randint(0, m["num_words"], size=(batch * steps, spec["seq_len"]))
        y = rng.randint(0, m["num_classes"], size=batch * steps)
    order = list(iter(EpochPermutationSampler(len(y), spec["seed"], shuffle=True)))[: batch * steps]
    model = be.build_model(
        m["num_words"], m["embed_dim"], m["hidden_size"], m["num_classes"], init="keras", seed=spec["seed"]
    )
    trainer = be.make_trainer(model, spec["lr"], spec.get("clip_norm"))
    losses = []
    for k in range(steps):
        rows = order[k * batch : (k + 1) * batch]
        loader = be.make_loader(x[rows], y[rows], batch, 0, shuffle=False, seed=spec["seed"])
        loss, _ = be.train_one_epoch(model, trainer, loader)  # one batch: its loss before the step
        losses.append(loss)
    be.synchronize()
    return losses


def run_arm(arm: str, spec: dict) -> list[float]:
    """One arm's per-step losses, in a fresh process of the arm's environment that imports only its framework."""
    spec = {**spec, "arm": arm}
    python, lib, variables = interpreter_of(get_study("imdb").arm(arm).env)
    env = {**child_env(spec["threads"], None, lib), **variables}  # threads as a trial sets them
    proc = subprocess.run(
        [python, __file__, "--child", json.dumps(spec)], capture_output=True, text=True, env=env, timeout=3600
    )
    if proc.returncode != 0:
        raise RuntimeError(f"twin check of {arm} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(a: list[float], b: list[float], tolerance: float = 1e-3) -> dict:
    """Per-step relative difference of two loss curves, and the first step past ``tolerance`` (None: none)."""
    rel = [abs(p - q) / max(abs(p), abs(q), 1e-12) for p, q in zip(a, b)]
    first = next((k for k, r in enumerate(rel) if r > tolerance), None)
    return {"relative_difference": rel, "first_apart": first, "tolerance": tolerance}


def twin_arms() -> list[str]:
    """One IMDB arm per framework with a twin: the study's reference arm where it names one (PyTorch dense, MXNet),
    else the framework's first declared arm (JAX's ``jax-jit``), PyTorch's first."""
    study = get_study("imdb")
    arms = list(study.reference.values())
    for arm in study.arms:
        if arm.framework not in study.reference and all(study.arm(a).framework != arm.framework for a in arms):
            arms.append(arm.name)
    return arms


def check(spec: dict, tolerance: float = 1e-3, arms: list[str] | None = None) -> dict:
    """Every twin (``twin_arms``, or ``arms``) on ``spec``; their losses and ``compare``'s answer for each arm
    against the first (``against_first``), the first such answer also at the top level."""
    losses = {arm: run_arm(arm, spec) for arm in arms or twin_arms()}
    first, *others = losses
    answers = {arm: compare(losses[first], losses[arm], tolerance=tolerance) for arm in others}
    return {"spec": spec, "losses": losses, "against_first": answers, **answers[others[0]]}


def main(argv=None) -> int:
    from fwbench.studies.imdb import MODEL

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:  # in the arm's fresh process (run_arm): one arm's losses as JSON on stdout
        print(json.dumps(_train_steps(json.loads(argv[1]))))
        return 0
    p = argparse.ArgumentParser(prog="python tools/twin_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=43)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--clip-norm", type=float, default=None, help="global gradient-norm clipping (both twins)")
    p.add_argument("--tolerance", type=float, default=1e-3)
    p.add_argument("-o", "--output", help="write the losses and differences as JSON here")
    args = p.parse_args(argv)
    if args.steps < 1 or args.batch_size < 1:
        p.error("--steps and --batch-size must be positive")
    if args.clip_norm is not None and args.clip_norm <= 0:
        p.error("--clip-norm must be positive")
    spec = {"data": "imdb", "model": dict(MODEL), "seq_len": 500}
    spec |= {k: getattr(args, k) for k in ("batch_size", "steps", "seed", "lr", "threads", "clip_norm")}
    out = check(spec, tolerance=args.tolerance)
    arms, others = list(out["losses"]), list(out["against_first"])
    print("step  " + "  ".join(f"{arm:>16}" for arm in arms) + "".join(f"  vs {arm} (relative)" for arm in others))
    for k, row in enumerate(zip(*out["losses"].values())):
        differences = "".join(f"  {out['against_first'][arm]['relative_difference'][k]:.2e}" for arm in others)
        print(f"{k:4d}  " + "  ".join(f"{loss:16.6f}" for loss in row) + differences)
    for arm, answer in out["against_first"].items():
        first = answer["first_apart"]
        print(f"{arm}: first step apart by more than {args.tolerance:g}: {first if first is not None else 'none'}")
    if args.output:
        with open(args.output, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
