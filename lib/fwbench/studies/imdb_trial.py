"""The IMDB study's trial: what one trial process runs (``run_trial``), apart from the study's declarations
(``fwbench.studies.imdb``: arm table, profiles, options, grid).

The split is the code fingerprint's seam (``Study.code_version``): this module, the arms' backends and the study's
``code`` modules are hashed into every trial id, the declarations are not, so editing a profile (its seeds, its
grid) leaves stored trials of unchanged configs current. Hence this module never imports the declarations: all a
trial does follows from its config, the arm table's row for its arm (hashed too) and the code hashed here.
"""

from __future__ import annotations

import os
import time

from ..measure import median
from .registry import get_study

STUDY_NAME = "imdb"
# the backends' build_model(variant=..., sparse=...) per arm variant
MODEL_VARIANT = {
    "eager": ("eager", False),
    "sparse": ("eager", True),
    "compiled": ("compiled", False),
    "imperative": ("imperative", False),
    "hybrid-partial": ("hybrid-partial", False),
    "hybrid-full": ("hybrid-full", False),
    "jit": ("jit", False),
}
HYBRID_VARIANTS = ("hybrid-partial", "hybrid-full")  # their trials record hybridize_ok / hybridize_error
LIFETIMES = ("per-epoch", "persistent")
DEFAULT_LIFETIME = "per-epoch"


def learning_rate(config: dict, epoch: int) -> float:
    schedule = config["lr_schedule"]
    if not schedule:
        return config["lr"]
    return config["lr"] * schedule["factor"] ** (epoch // schedule["every_epochs"])


def run_trial(config: dict, report=None) -> dict:
    """Train and evaluate one arm; returns summary, per-epoch measurements and provenance."""
    from ..data.imdb import Encoding, load_imdb
    from ..sampling import ProcessTreeSampler

    arm = get_study(STUDY_NAME).arm_of(config)
    onednn = config.get("onednn", True)
    os.environ.update(arm.onednn_env(onednn))  # read by MXNet at import: set before the backend module is imported
    be = arm.load_backend()  # the one framework of this process
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    data = load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])
    m = config["model"]
    variant, sparse = MODEL_VARIANT[arm.variant]
    model = be.build_model(
        m["num_words"],
        m["embed_dim"],
        m["hidden_size"],
        m["num_classes"],
        sparse=sparse,
        variant=variant,
        device=config.get("device", "cpu"),
        init=config.get("init", "uniform"),
        seed=config["seed"],
    )
    trainer = be.make_trainer(model, config["lr"], config.get("clip_norm"))
    sampler = ProcessTreeSampler().start()  # CPU and memory of this process and its workers, live or reaped
    persistent = config.get("worker_lifetime", DEFAULT_LIFETIME) == "persistent"
    train_loader = be.make_loader(
        data.x_train,
        data.y_train,
        config["batch_size"],
        config["num_workers"],
        shuffle=True,
        seed=config["seed"],
        persistent=persistent,
    )
    test_loader = be.make_loader(data.x_test, data.y_test, 512, 0, shuffle=False, seed=config["seed"])
    summary = {"n_parameters": be.count_parameters(model)}
    measurements = []
    try:
        with be.onednn(onednn):
            summary["onednn_active"] = be.onednn_enabled()
            # compilation (torch.compile) and graph building (hybridize) happen here, timed apart from the epochs
            try:
                measurements.append((-1, "prepare_time_s", be.prepare(model, trainer, train_loader)))
                if arm.variant in HYBRID_VARIANTS:
                    summary.update(hybridize_ok=True, hybridize_error=None)
            except Exception as exc:  # noqa: BLE001 - a model that cannot be hybridized is a result (claim A9)
                if arm.variant not in HYBRID_VARIANTS:
                    raise
                summary.update(hybridize_ok=False, hybridize_error=f"{type(exc).__name__}: {exc}"[:4000])
            if summary.get("hybridize_ok", True):
                measurements += _epochs(config, be, model, trainer, train_loader, test_loader, sampler, report)
    finally:
        sampler.stop()
    peak = sampler.peak_rss_bytes / 2**20
    measurements.append((-1, "peak_rss_mb", peak))
    timed = [v for step, k, v in measurements if k == "train_time_s" and step > 0]
    final = {k: v for step, k, v in measurements if step == config["epochs"] - 1}
    summary.update(
        median_epoch_s=median(timed) if timed else None,
        final_test_acc=final.get("test_acc"),
        final_train_loss=final.get("train_loss"),
        peak_rss_mb=peak,
    )
    return {
        "summary": summary,
        "measurements": measurements,
        "provenance": {
            **be.framework_info(),
            "dataset_source": os.path.basename(data.source),
            "dataset_checksum": data.checksum,
        },
    }


def _epochs(config, be, model, trainer, train_loader, test_loader, sampler, report) -> list:
    """The timed epochs: (epoch, metric, value) rows."""
    import psutil

    from ..sampling import busy_fraction

    rows = []
    for epoch in range(config["epochs"]):
        lr = learning_rate(config, epoch)
        be.set_learning_rate(trainer, lr)
        snap0, sys0 = sampler.snapshot(), psutil.cpu_times()
        t0 = time.perf_counter()
        train_loss, seen = be.train_one_epoch(model, trainer, train_loader)
        be.synchronize()
        train_time = time.perf_counter() - t0
        snap1, sys1 = sampler.snapshot(), psutil.cpu_times()
        t1 = time.perf_counter()
        test_loss, test_acc = be.evaluate(model, test_loader)
        be.synchronize()
        eval_time = time.perf_counter() - t1
        values = {
            "train_time_s": train_time,
            "train_loss": train_loss,
            "test_loss": test_loss,
            "test_acc": test_acc,
            "samples_per_s": seen / train_time,
            "lr": lr,
            "eval_time_s": eval_time,
            "proc_cpu_pct": 100.0 * sampler.cpu_seconds(snap0, snap1) / train_time,
            "worker_cpu_pct": 100.0 * sampler.worker_cpu_seconds(snap0, snap1) / train_time,
            "sys_cpu_pct": 100.0 * busy_fraction(sys0, sys1) * (os.cpu_count() or 1),
        }
        rows += [(epoch, k, v) for k, v in values.items()]
        if report:
            report(
                f"epoch {epoch + 1}/{config['epochs']}: {train_time:.2f}s loss={train_loss:.4f} test_acc={test_acc:.3f}"
            )
    return rows
