# Experiment 5 (frequency_estimation): utility of each bound's calibrated local budgets, one
# table per method (input functions simulation_data, simulation_methods: common.smk), then one
# tidy table and two figures.


rule simulate_frequency:
    input:
        unpack(simulation_data("frequency_estimation")),
    output:
        table=results_path("frequency_estimation/runs/{method}.csv"),
    log:
        log_path("simulate_frequency/{method}.log"),
    benchmark:
        benchmark_path("simulate_frequency/{method}.tsv")
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
        section=config["frequency_estimation"],
        profiles=profile_specs(config["frequency_estimation"]["profiles"]),
        seed=config["seed"],
    script:
        "../scripts/simulate_frequency.py"


rule collect_frequency_estimation:
    input:
        tables=expand(
            results_path("frequency_estimation/runs/{method}.csv"),
            method=simulation_methods("frequency_estimation"),
        ),
    output:
        table=report(
            results_path("frequency_estimation/frequency_estimation.csv"),
            caption="../report/table_frequency_estimation.rst",
            category="3 Tables",
            subcategory="Frequency estimation",
        ),
    log:
        log_path("collect_frequency_estimation.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="frequency_estimation",
        expect=piece_grids("frequency_estimation"),
    script:
        "../scripts/concat_tables.py"


rule plot_frequency_estimation:
    input:
        table=results_path("frequency_estimation/frequency_estimation.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("frequency_estimation"),
    output:
        png=report(
            results_path("figures/frequency_estimation.png"),
            caption="../report/frequency_estimation.rst",
            category="1 Main figures",
            subcategory="Frequency estimation",
        ),
        pdf=results_path("figures/frequency_estimation.pdf"),
        all_png=report(
            results_path("figures/frequency_estimation_all.png"),
            caption="../report/frequency_estimation_all.rst",
            category="2 Appendix figures",
            subcategory="Frequency estimation",
        ),
        all_pdf=results_path("figures/frequency_estimation_all.pdf"),
    log:
        log_path("plot_frequency_estimation.log"),
    benchmark:
        benchmark_path("plot_frequency_estimation.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="frequency_estimation",
        main_mechanism=config["frequency_estimation"]["main_mechanism"],
        title="Frequency estimation: MSE per category at calibrated local budgets",
        ylabel="MSE per category",
    script:
        "../scripts/plot_utility.py"


rule frequency_estimation:
    input:
        experiment_outputs("frequency_estimation"),
    localrule: True
