# Experiment 7 (runtime): wall-clock time of each bound vs n, one job (no competing job),
# one figure.


rule time_bounds:
    output:
        table=report(
            results_path("runtime/runtime.csv"),
            caption="../report/table_runtime.rst",
            category="3 Tables",
            subcategory="Runtime",
        ),
    log:
        log_path("time_bounds.log"),
    benchmark:
        benchmark_path("time_bounds.tsv")
    conda:
        "../envs/shuffledp.yaml"
    # Two threads (capped at --cores): on a 2-core machine the timings run with no other job
    # competing; the bounds themselves are single-threaded.
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        n=config["runtime"]["n"],
        profile=config["runtime"]["profile"],
        profile_spec=lambda wc: config["profiles"][config["runtime"]["profile"]],
        delta=config["runtime"]["delta"],
        repeats=config["runtime"]["repeats"],
        methods=bound_methods(),
        seed=config["seed"],
    script:
        "../scripts/time_bounds.py"


rule plot_runtime:
    input:
        table=results_path("runtime/runtime.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("runtime"),
    output:
        png=report(
            results_path("figures/runtime.png"),
            caption="../report/runtime.rst",
            category="1 Main figures",
            subcategory="Runtime",
        ),
        pdf=results_path("figures/runtime.pdf"),
    log:
        log_path("plot_runtime.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_runtime.py"


rule runtime:
    input:
        experiment_outputs("runtime"),
    localrule: True
