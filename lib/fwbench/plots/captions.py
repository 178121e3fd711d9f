"""The captions of the figures the post shows (``fwbench.report``), in the post's order: what each figure shows and
what its bars and bands are (their n, and what the interval means). Every figure a notebook publishes has one
(``tests/test_figures.py``); any other PNG of a run is shown under "More figures" with its file name. Plain text
next to the figure functions it describes; it imports nothing."""

CAPTIONS = {
    "answer_speed": "The answer in one figure: each workload's time ratio MXNet / PyTorch (log scale; above 1, "
    "PyTorch is faster). Dot: our ratio, the geometric mean over independent trials (fresh processes), with its "
    "interval over those trials (95 %, family-wise where the ledger judges a claim in several parts; n in the "
    "text); diamond: the source's ratio on its own hardware. A ratio the ledger states as PyTorch / MXNet is "
    "drawn inverted.",
    "imdb_epoch_time": "IMDB LSTM: training time per 25,000-review epoch against batch size, one line per arm, one "
    "panel per data-loader worker count. Points: median over the timed epochs (each trial's first "
    "epoch excluded) of all trials of a setting; bars: their IQR, a spread of epochs, not a "
    "confidence interval.",
    "imdb_ratio": "IMDB LSTM: epoch-time ratio MXNet / PyTorch per setting (above 1: MXNet slower). Point: "
    "geometric-mean ratio of the trials' medians of their timed epochs; bars: 95 % CI over the n "
    "independent trials (fresh processes) a side, n in the title; never over epochs.",
    "imdb_scaling": "IMDB LSTM cost growth: training time per epoch (median over the timed epochs) against sequence "
    "length for 1 and 2 threads, and, where a GEMM peak was measured, the achieved share of this "
    "machine's fp32 GEMM peak (LSTM gate matrix multiplies only). No intervals.",
    "convergence_imdb_loss": "IMDB LSTM: training and test loss (cross-entropy) per epoch, one panel per setting, one "
    "colour per arm. Line: median; light band: min-max, dark band: IQR, over n independent "
    "trials (fresh processes, one per seed; n in the legend).",
    "convergence_imdb_accuracy": "IMDB LSTM: test accuracy per epoch, one colour per arm. Line: median; light band: "
    "min-max, dark band: IQR, over n independent trials (fresh processes, one per "
    "seed; n in the legend).",
    "convergence_imdb_wallclock": "IMDB LSTM: training loss against cumulative training time (s; x: the median over "
    "the trials at each epoch). Line: median; light band: min-max, dark band: IQR, "
    "over n independent trials (fresh processes, one per seed; n in the legend).",
    "convergence_deepar_loss": "DeepAR: training loss (negative log-likelihood) per epoch, one panel per Monash "
    "dataset (at most four), one colour per arm. Line: median; light band: min-max, dark "
    "band: IQR, over n independent trials (fresh processes, one per seed; n in the legend).",
    "deepar_runtime": "DeepAR on Monash datasets: training + forecasting time per trial, per dataset and arm (log "
    "scale), sorted by the MXNet time as in the 2024 post. Bars: median over n independent trials "
    "(one per seed; n in the legend); no interval.",
    "deepar_ratio": "DeepAR: MXNet / PyTorch training time per dataset (the post's measure; 1: parity; dashed: the "
    "post's 4.46x). Points: geometric-mean ratio over seeds; bars: 95 % CI over the n "
    "independent trials per arm (one per seed; n in the legend), none with one seed.",
    "deepar_ratio_by_window": "DeepAR: MXNet / PyTorch time per dataset against the unrolled window (context + "
    "prediction length, log scale): training (filled) and training + forecasting (hollow), "
    "with the Spearman rank correlation. Bars: 95 % CI over the n independent "
    "trials per arm (one per seed; n in the legend).",
    "deepar_post_prediction": "DeepAR: the 2024 post's total training seconds per dataset (read off its chart, "
    "about +-135 s per pixel) against our prediction from the coverage part's per-batch cost on this CPU (log axes; "
    "grey: identity). Filled: measured here, each the median over the n = 2 independent coverage trials (fresh "
    "processes) of its dataset and framework, no interval; hollow: from the window line; labels: predicted / "
    "published. The prediction uses no value of the chart.",
    "deepar_post_conditions": "DeepAR: MXNet / PyTorch per dataset of the 2024 post against the window (log x): "
    "black stars, the post's chart on the 21 datasets this study was given; one line per measured condition (CPU "
    "model, runs at once, threads), its prediction from its own trials (the coverage part's costs scaled by the "
    "condition's factor where it did not run a dataset; no interval), the chosen condition bold. Filled markers: "
    "datasets whose chart value was given; hollow: predicted only. Grey dashes: the post's 4.5. The chart only "
    "ranks the conditions (RMS log error of the ratio on the given datasets).",
    "deepar_conditions": "DeepAR: each framework's training time per batch under a condition over its own at the "
    "baseline (the profile's 2 threads, machine otherwise idle; log scale), per dataset: 1 thread, more threads than "
    "the 2 cores (4, 8), and 2 threads beside one busy-loop process pinned to a core. Bars: 95 % CI over the n = 3 "
    "independent trials (fresh processes) per framework and condition; numbers under the line: the MXNet / "
    "PyTorch ratio under that condition. Contention measured on purpose: these trials enter no other comparison.",
    "deepar_breakdown": "DeepAR: where the time of a trial goes, per dataset and arm: the data pipeline alone, the "
    "network steps (forward, backward, update), set-up outside the epochs, and forecasting. Bars: "
    "medians over n independent trials (one per seed; n in the axis label); no interval.",
    "vgg16_latency": "VGG16 forward-pass latency on this CPU per arm, one panel per batch and image size; filled bars "
    "oneDNN on, hollow off. Bar: median of all timed passes of the n trials behind it (fresh "
    "processes; n in the panel title); whiskers: IQR of those passes; dots: single passes; dashed: "
    "the overview article's latencies (batch 1, 224x224).",
    "vgg16_compiled": "VGG16, compiled against eager PyTorch (claim C4): eager / compiled latency per compiled arm "
    "against the batch size (>1: compiling helps; dashed: oneDNN off). Bars: 95 % CI of the "
    "geometric-mean ratio of the trials' median latencies, over the n independent trials per point "
    "(fresh processes; n in the legend). Right: each compiled arm's median compile time (first call "
    "included).",
    "gemm_peak": "fp32 GEMM throughput of each framework's matmul on this CPU against the matrix size n (each "
    "trial's config), per thread count (solid: the most threads). Line: median of the timed repeats of "
    "the one trial (one process) behind each point; band: their IQR, a spread of repeats in one "
    "process, not a confidence interval.",
    "onnx_latency": "The IMDB LSTM exported to ONNX: inference latency per call in PyTorch and ONNX Runtime per "
    "batch size (log scale; MXNet's import fails, see the ledger's A10). Bars: median over the timed "
    "calls of the one trial per runtime; whiskers: IQR of those calls.",
    "dataparallel_rate_and_sync": "Data-parallel training on this CPU (claim C2's mechanism, not its 8 GPUs), "
    "synthetic images. Left: samples/s of the whole group against the number of workers (1 thread each); dots: "
    "independent trials (fresh groups of processes), line: their median. Right: milliseconds of one sync "
    "(PyTorch's all-reduce, MXNet's push + pull) against the float32 values synced, the slowest worker's median "
    "(solid: the most workers, dotted: 1); band: the range over trials, not a confidence interval.",
}
