# Experiment 2 (personalized): central eps of personalized budget profiles vs n, every bound;
# one table per profile, one tidy table, the paper's LaTeX/Markdown table and two figures.


rule compute_personalized:
    output:
        table=results_path("personalized/{profile}.csv"),
    log:
        log_path("compute_personalized/{profile}.log"),
    benchmark:
        benchmark_path("compute_personalized/{profile}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        profiles=lambda wc: [wc.profile],
        profile_specs=lambda wc: profile_specs([wc.profile]),
        n=config["personalized"]["n"],
        delta=config["personalized"]["delta"],
        delta0=config["personalized"]["delta0"],
        methods=bound_methods(),
        seed=config["seed"],
    script:
        "../scripts/compute_personalized.py"


rule collect_personalized:
    input:
        tables=expand(
            results_path("personalized/{profile}.csv"),
            profile=config["personalized"]["profiles"],
        ),
    output:
        table=report(
            results_path("personalized/personalized.csv"),
            caption="../report/table_personalized.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
    log:
        log_path("collect_personalized.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="personalized",
        expect=piece_grids("personalized"),
    script:
        "../scripts/concat_tables.py"


rule make_tables:
    input:
        table=results_path("personalized/personalized.csv"),
    output:
        latex=report(
            results_path("tables/personalized.tex"),
            caption="../report/table_personalized_paper.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
        markdown=report(
            results_path("tables/personalized.md"),
            caption="../report/table_personalized_paper.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
    log:
        log_path("make_tables.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        table_n=config["personalized"]["table_n"],
    script:
        "../scripts/make_tables.py"


rule plot_personalized:
    input:
        table=results_path("personalized/personalized.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("personalized"),
    output:
        png=report(
            results_path("figures/personalized.png"),
            caption="../report/personalized.rst",
            category="1 Main figures",
            subcategory="Personalized budgets",
        ),
        pdf=results_path("figures/personalized.pdf"),
        all_png=report(
            results_path("figures/personalized_all.png"),
            caption="../report/personalized_all.rst",
            category="2 Appendix figures",
            subcategory="Personalized budgets",
        ),
        all_pdf=results_path("figures/personalized_all.pdf"),
    log:
        log_path("plot_personalized.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        main_profiles=config["personalized"]["main_profiles"],
    script:
        "../scripts/plot_personalized.py"


rule personalized:
    input:
        experiment_outputs("personalized"),
    localrule: True
