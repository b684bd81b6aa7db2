"""Write the effective (validated, defaults filled) configuration next to the results."""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_text


def main(*, inputs, outputs, params, log=None):
    import yaml

    logger = get_logger(log)
    text = yaml.safe_dump(dict(params["config"]), sort_keys=True)
    write_text(text, outputs["config"])
    logger.info("wrote %s", outputs["config"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
