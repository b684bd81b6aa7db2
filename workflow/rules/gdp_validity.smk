# Experiment 3 (gdp_validity): the paper's eps against the exact lower bound over (n, eps0);
# one table per n, one tidy table, one figure.


rule compute_gdp_validity:
    output:
        table=results_path("gdp_validity/n_{n}.csv"),
    log:
        log_path("compute_gdp_validity/n_{n}.log"),
    benchmark:
        benchmark_path("compute_gdp_validity/n_{n}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        n=lambda wc: [int(wc.n)],
        eps0=config["gdp_validity"]["eps0"],
        delta=config["gdp_validity"]["delta"],
    script:
        "../scripts/compute_gdp_validity.py"


rule collect_gdp_validity:
    input:
        tables=expand(
            results_path("gdp_validity/n_{n}.csv"), n=config["gdp_validity"]["n"]
        ),
    output:
        table=report(
            results_path("gdp_validity/gdp_validity.csv"),
            caption="../report/table_gdp_validity.rst",
            category="3 Tables",
            subcategory="Validity of the paper's formula",
        ),
    log:
        log_path("collect_gdp_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="gdp_validity",
        expect=piece_grids("gdp_validity"),
    script:
        "../scripts/concat_tables.py"


rule plot_gdp_validity:
    input:
        table=results_path("gdp_validity/gdp_validity.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("gdp_validity"),
    output:
        png=report(
            results_path("figures/gdp_validity.png"),
            caption="../report/gdp_validity.rst",
            category="1 Main figures",
            subcategory="Validity of the paper's formula",
        ),
        pdf=results_path("figures/gdp_validity.pdf"),
    log:
        log_path("plot_gdp_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_gdp_validity.py"


rule gdp_validity:
    input:
        experiment_outputs("gdp_validity"),
    localrule: True
