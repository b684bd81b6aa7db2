# Experiment 4 (mean_estimation): utility of each bound's calibrated local budgets, one table
# per method (input functions simulation_data, simulation_methods: common.smk), then one tidy
# table and two figures.


rule simulate_mean:
    input:
        unpack(simulation_data("mean_estimation")),
    output:
        table=results_path("mean_estimation/runs/{method}.csv"),
    log:
        log_path("simulate_mean/{method}.log"),
    benchmark:
        benchmark_path("simulate_mean/{method}.tsv")
    wildcard_constraints:
        method="[a-z][a-z0-9_]*",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        method=lambda wc: wc.method,
        section=config["mean_estimation"],
        profiles=profile_specs(config["mean_estimation"]["profiles"]),
        seed=config["seed"],
    script:
        "../scripts/simulate_mean.py"


rule collect_mean_estimation:
    input:
        tables=expand(
            results_path("mean_estimation/runs/{method}.csv"),
            method=simulation_methods("mean_estimation"),
        ),
    output:
        table=report(
            results_path("mean_estimation/mean_estimation.csv"),
            caption="../report/table_mean_estimation.rst",
            category="3 Tables",
            subcategory="Mean estimation",
        ),
    log:
        log_path("collect_mean_estimation.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="mean_estimation",
        expect=piece_grids("mean_estimation"),
    script:
        "../scripts/concat_tables.py"


rule plot_mean_estimation:
    input:
        table=results_path("mean_estimation/mean_estimation.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("mean_estimation"),
    output:
        png=report(
            results_path("figures/mean_estimation.png"),
            caption="../report/mean_estimation.rst",
            category="1 Main figures",
            subcategory="Mean estimation",
        ),
        pdf=results_path("figures/mean_estimation.pdf"),
        all_png=report(
            results_path("figures/mean_estimation_all.png"),
            caption="../report/mean_estimation_all.rst",
            category="2 Appendix figures",
            subcategory="Mean estimation",
        ),
        all_pdf=results_path("figures/mean_estimation_all.pdf"),
    log:
        log_path("plot_mean_estimation.log"),
    benchmark:
        benchmark_path("plot_mean_estimation.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="mean_estimation",
        main_mechanism=config["mean_estimation"]["main_mechanism"],
        title="Mean estimation: MSE of the shuffled estimate at calibrated local budgets",
        ylabel="MSE",
    script:
        "../scripts/plot_utility.py"


rule mean_estimation:
    input:
        experiment_outputs("mean_estimation"),
    localrule: True
