# Experiment 1 (bounds_vs_n): central eps vs n for identical local budgets, every bound and
# the exact lower bound; one table per eps0, one tidy table, the main and the appendix figure.


rule compute_bounds_vs_n:
    output:
        table=results_path("bounds/bounds_vs_n/eps0_{eps0}.csv"),
    log:
        log_path("compute_bounds_vs_n/eps0_{eps0}.log"),
    benchmark:
        benchmark_path("compute_bounds_vs_n/eps0_{eps0}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        n=config["bounds_vs_n"]["n"],
        eps0=lambda wc: float(wc.eps0),
        delta=config["bounds_vs_n"]["delta"],
        methods=bound_methods(),
    script:
        "../scripts/compute_bounds_vs_n.py"


rule collect_bounds_vs_n:
    input:
        tables=expand(
            results_path("bounds/bounds_vs_n/eps0_{eps0}.csv"),
            eps0=[fmt_num(e) for e in config["bounds_vs_n"]["eps0"]],
        ),
    output:
        table=report(
            results_path("bounds/bounds_vs_n.csv"),
            caption="../report/table_bounds_vs_n.rst",
            category="3 Tables",
            subcategory="Identical budgets: eps vs n",
        ),
    log:
        log_path("collect_bounds_vs_n.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="bounds_vs_n",
        expect=piece_grids("bounds_vs_n"),
    script:
        "../scripts/concat_tables.py"


rule plot_bounds_vs_n:
    input:
        table=results_path("bounds/bounds_vs_n.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("bounds_vs_n"),
    output:
        png=report(
            results_path("figures/bounds_vs_n.png"),
            caption="../report/bounds_vs_n.rst",
            category="1 Main figures",
            subcategory="Identical budgets: eps vs n",
        ),
        pdf=results_path("figures/bounds_vs_n.pdf"),
        all_png=report(
            results_path("figures/bounds_vs_n_all.png"),
            caption="../report/bounds_vs_n_all.rst",
            category="2 Appendix figures",
            subcategory="Identical budgets: eps vs n",
        ),
        all_pdf=results_path("figures/bounds_vs_n_all.pdf"),
    log:
        log_path("plot_bounds_vs_n.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_bounds_vs_n.py"


rule bounds_vs_n:
    input:
        experiment_outputs("bounds_vs_n"),
    localrule: True
