# One named target per experiment: `snakemake --cores all <target>`.


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
