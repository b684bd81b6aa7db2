# One named target per experiment: `snakemake --cores all <target>`.  Each also writes the
# configuration that produced its outputs (results/<run>/config_used/<target>.yaml).


rule bounds_vs_n:
    input:
        experiment_outputs("bounds_vs_n"),
    localrule: True


rule gdp_validity:
    input:
        experiment_outputs("gdp_validity"),
    localrule: True


rule personalized:
    input:
        experiment_outputs("personalized"),
    localrule: True


rule personalized_validity:
    input:
        experiment_outputs("personalized_validity"),
    localrule: True


rule runtime:
    input:
        experiment_outputs("runtime"),
    localrule: True


rule mean_estimation:
    input:
        experiment_outputs("mean_estimation"),
    localrule: True


rule frequency_estimation:
    input:
        experiment_outputs("frequency_estimation"),
    localrule: True


rule sgd:
    input:
        experiment_outputs("sgd"),
    localrule: True
