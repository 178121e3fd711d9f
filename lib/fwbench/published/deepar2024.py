"""The 2024 blog post comparing GluonTS DeepAR in MXNet and PyTorch on the Monash archive: its totals."""

from __future__ import annotations

SOURCE = "Blog post, GluonTS DeepAR MXNet vs PyTorch on the Monash archive (2024-07-18)"
CONDITIONS = (
    "laptop CPU; gluonts.mx vs gluonts.torch, GluonTS defaults, 100 epochs; the Monash datasets of the post's list "
    "(its text says 40) x 5 seeds (42-46)"
)
HARDWARE = "a laptop CPU (model not given)"
# the post's text says 40 datasets; its list (the catalogue's ``monash.names(in_2024_post=True)``) has 41: pages
# count the list and quote this only as the post's own words
N_DATASETS_STATED = 40
TOTAL_TRAIN_S = {"mxnet": 395_807.0, "torch": 88_756.0}  # total training seconds per framework
CLAIMED_SPEEDUP = 4.5  # the post's wording, "PyTorch is 4.5x faster"; the measured figure is its totals' (post_ratio)


def post_ratio() -> float:
    """MXNet / PyTorch of the post's own totals."""
    return TOTAL_TRAIN_S["mxnet"] / TOTAL_TRAIN_S["torch"]


# The datasets whose bars the reference file gives (shared/reference/deepar_runtime_chart_2024_part.csv): the part of
# the post's chart this study was shown. A condition is chosen on these alone; the other datasets' bars judge it.
CHART_GIVEN = (
    "tourism_yearly", "m3_yearly", "solar_weekly", "m3_quarterly", "tourism_quarterly", "kaggle_web_traffic",
    "car_parts", "fred_md", "m1_monthly", "m4_monthly", "covid_deaths", "sunspot", "tourism_monthly",
    "vehicle_trips", "nn5_daily", "nn5_weekly", "m4_weekly", "traffic_hourly", "m4_hourly", "rideshare",
    "solar_10_minutes",
)  # fmt: skip
