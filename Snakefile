# shuffledp: reproduce every figure and table with `snakemake --cores all`.
# Quick default: config/config.yaml; full grids: --configfile config/paper.yaml.
# Every output, log and benchmark of a configuration goes under results/<run>/ (config key run).
from snakemake.utils import min_version

min_version("8.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/bounds.smk"
include: "workflow/rules/simulations.smk"
include: "workflow/rules/sgd.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/targets.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
