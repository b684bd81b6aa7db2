"""Concatenate tidy CSV tables with identical meaning into one (atomic write)."""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    paths = inputs["tables"]
    paths = [paths] if isinstance(paths, str) else list(paths)
    frames = [pd.read_csv(p) for p in paths]
    df = pd.concat(frames, ignore_index=True, sort=False)
    write_table(df, outputs["table"])
    logger.info("wrote %d rows from %d tables to %s", len(df), len(paths), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
