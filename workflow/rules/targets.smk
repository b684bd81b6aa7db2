# One named target per experiment: `snakemake --cores all <target>`.

EXPERIMENTS = {
    "bounds_vs_n": [
        "results/bounds/bounds_vs_n.csv",
        "results/figures/bounds_vs_n.png",
        "results/figures/bounds_vs_n.pdf",
    ],
    "gdp_validity": [
        "results/gdp_validity/gdp_validity.csv",
        "results/figures/gdp_validity.png",
        "results/figures/gdp_validity.pdf",
    ],
    "personalized": [
        "results/personalized/personalized.csv",
        "results/figures/personalized.png",
        "results/figures/personalized.pdf",
        "results/tables/personalized.tex",
        "results/tables/personalized.md",
    ],
    "runtime": [
        "results/runtime/runtime.csv",
        "results/figures/runtime.png",
        "results/figures/runtime.pdf",
    ],
    "mean_estimation": [
        "results/mean_estimation/mean_estimation.csv",
        "results/figures/mean_estimation.png",
        "results/figures/mean_estimation.pdf",
    ],
    "frequency_estimation": [
        "results/frequency_estimation/frequency_estimation.csv",
        "results/figures/frequency_estimation.png",
        "results/figures/frequency_estimation.pdf",
    ],
    "sgd": [
        "results/sgd/sgd.csv",
        "results/figures/sgd.png",
        "results/figures/sgd.pdf",
    ],
}


def all_outputs():
    return [path for paths in EXPERIMENTS.values() for path in paths]


rule bounds_vs_n:
    input:
        EXPERIMENTS["bounds_vs_n"],
    localrule: True


rule gdp_validity:
    input:
        EXPERIMENTS["gdp_validity"],
    localrule: True


rule personalized:
    input:
        EXPERIMENTS["personalized"],
    localrule: True


rule runtime:
    input:
        EXPERIMENTS["runtime"],
    localrule: True


rule mean_estimation:
    input:
        EXPERIMENTS["mean_estimation"],
    localrule: True


rule frequency_estimation:
    input:
        EXPERIMENTS["frequency_estimation"],
    localrule: True


rule sgd:
    input:
        EXPERIMENTS["sgd"],
    localrule: True
