"""Concatenate the per-job pieces of one table kind into its tidy table (atomic write).

Every piece is validated against the declared columns and types of ``params["kind"]``
(:mod:`tables`), so all pieces have the same kind and columns; a corrupted piece fails the rule
with one line naming the file, the column and the line.

Snakemake interface (rules ``collect_*``): input ``tables``; output ``table``; params ``kind``
and ``expect`` (piece path -> the rows it must hold, from the configuration: function
``piece_grids`` of common.smk; a deleted or stale row fails the rule).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from table_schemas import concat
from wfutils import get_logger, run_main, write_table


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    kind = (params or {}).get("kind")
    if not kind:
        raise ValueError("concat_tables needs params kind (the table kind of its pieces)")
    paths = inputs["tables"]
    paths = [paths] if isinstance(paths, str) else list(paths)
    df = concat(paths, kind, expect=(params or {}).get("expect"))
    write_table(df, outputs["table"])
    logger.info(
        "wrote %d rows of kind %s from %d tables to %s", len(df), kind, len(paths), outputs["table"]
    )


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
