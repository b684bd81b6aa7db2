# shuffledp: reproduce every figure and table with `snakemake --cores all`.
# Quick default: config/config.yaml; full grids: --configfile config/paper.yaml.
# Every output, log and benchmark of a configuration goes under results/<run>/ (config key run).
from snakemake.utils import min_version

min_version("8.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# config validation, the lists derived from the experiment manifest (wfmanifest), input functions
include: "workflow/rules/common.smk"
# one rules file per experiment of the manifest (compute, collect, plot and its target rule)
include: "workflow/rules/bounds_vs_n.smk"
include: "workflow/rules/gdp_validity.smk"
include: "workflow/rules/personalized.smk"
include: "workflow/rules/personalized_validity.smk"
include: "workflow/rules/runtime.smk"
include: "workflow/rules/mean_estimation.smk"
include: "workflow/rules/frequency_estimation.smk"
include: "workflow/rules/sgd.smk"
# shared: the configuration used, the report's tables and landing page, the README gallery
include: "workflow/rules/shared.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
